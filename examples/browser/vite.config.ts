import { defineConfig } from 'vite';

// A static page: `npm run build` writes dist/, which any static server can serve.
export default defineConfig({ base: './', build: { target: 'es2022' } });
