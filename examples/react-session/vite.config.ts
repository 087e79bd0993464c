import { defineConfig } from 'vite';

// JSX with React's automatic runtime (Vite's built-in transform; no plugin needed to build).
export default defineConfig({ base: './', build: { target: 'es2022' }, oxc: { jsx: { runtime: 'automatic' } } });
