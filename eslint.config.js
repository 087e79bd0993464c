// Lint for src/, test/, scripts/, bin/ and the bench's own TypeScript. `npm run lint` runs it.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['dist/**', '**/node_modules/**', 'bench/peers/**', 'examples/**', 'test/consumer/app/**', 'coverage/**', '.steward/**', 'scratch/**'],
  },
  {
    files: ['**/*.{ts,tsx,mjs,js}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `const { secret: _secret, ...rest } = value` is how a field is left out of a copy.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `let x; const f = () => x; x = make(f)`: a closure made before the value it reads.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Assertions read JSON response bodies field by field; typing each one would hide the test.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // track(): onEnd may run inside make(), before `session` is assigned, where a const would
    // still be in its temporal dead zone.
    files: ['src/runtime/runtime.ts'],
    rules: { 'prefer-const': 'off' },
  },
  {
    // DOM code, bundled by Vite for the browser.
    files: ['src/inspect/page/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
