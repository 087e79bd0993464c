// The `steward` command as one bundle (dist/cli/bundle/main.js, with chunks for what commands
// load later): a command starts by loading a few files instead of some 240 modules, which is
// most of its start-up time. The library's entries stay as tsc writes them (dist/*.js).
// Used by scripts/build.mjs and by the tests' compiled CLI (test/support/cli-build.ts).
import { build, buildSync } from 'esbuild';
import { join } from 'node:path';

/**
 * Packages left to Node's resolution at run time: native or optional ones, those the command
 * loads only for some work (the MCP SDK, OpenTelemetry's SDK and exporters, the inspector's
 * server, the protocols), and Vite (building a page). `@opentelemetry/api` is bundled: every
 * command loads it (the runtime's tracing is written against it), and from node_modules it is
 * some 30 CommonJS files to resolve and compile at each start. The SDK's own copy and the
 * bundled one share their state through the global the API keeps for that (one per major version).
 */
const EXTERNAL = [
  'better-sqlite3',
  'pg',
  'pg-native',
  'vite',
  'esbuild',
  'playwright-core',
  '@modelcontextprotocol/*',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace-base',
  'openai',
  'hono',
  '@hono/*',
  'ws',
  '@statelyai/inspect',
  '@ag-ui/*',
  '@a2a-js/*',
  'tsx',
  'typescript',
];

/** esbuild's options for bundling `root`'s src/cli/main.ts into `outDir` (its dist/cli/bundle). */
function options(root, outDir) {
  return {
    entryPoints: { main: join(root, 'src/cli/main.ts') },
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: join(root, 'tsconfig.json'),
    external: EXTERNAL,
    // CommonJS packages in the bundle require Node's modules by name.
    banner: { js: "import { createRequire as stewardCreateRequire } from 'node:module'; const require = stewardCreateRequire(import.meta.url);" },
    chunkNames: 'chunks/[name]-[hash]',
    // Less text for Node to read, decode and parse at each start (V8 pre-parses every function
    // of a loaded chunk). Names are kept as they are (no minifyIdentifiers): the errors' classes
    // and a STEWARD_DEBUG stack name the functions.
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'error',
  };
}

/** Bundles `root`'s src/cli/main.ts into `outDir` (its dist/cli/bundle). */
export async function bundleCli(root, outDir) {
  await build(options(root, outDir));
}

/** The same, synchronously (the tests' compiled CLI is made inside a synchronous build step). */
export function bundleCliSync(root, outDir) {
  buildSync(options(root, outDir));
}
