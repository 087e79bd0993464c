/**
 * esbuild bundles an entry for web pages (`platform: 'browser'`, minified, in memory) and
 * records every Node built-in it reaches — a `node:` import, or `fs`, `path`, … without the
 * prefix — instead of failing on the first, so a test can show them all. A build error
 * (an import that does not resolve) rejects: esbuild throws with its messages. `code` is the
 * bundle itself, for a test that loads it (an ES module).
 */
import { builtinModules } from 'node:module';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions, type Plugin } from 'esbuild';

const nodeBuiltins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

export interface BrowserBundle {
  /** Each Node built-in reached, with the module that imported it. */
  reached: string[];
  bytes: number;
  gzipped: number;
  code: string;
}

/** `source`: an entry file, or module text (`stdin`); `absWorkingDir` resolves installed packages. */
export async function browserBundle(
  source: { entry: string } | { stdin: string },
  options: { absWorkingDir?: string; external?: string[] } = {},
): Promise<BrowserBundle> {
  const reached: string[] = [];
  const noNode: Plugin = {
    name: 'no-node-builtins',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (!nodeBuiltins.has(args.path) && !args.path.startsWith('node:')) return undefined;
        reached.push(`${args.path} (from ${args.importer})`);
        return { path: args.path, external: true };
      });
    },
  };
  const input: BuildOptions =
    'entry' in source
      ? { entryPoints: [source.entry] }
      : { stdin: { contents: source.stdin, resolveDir: options.absWorkingDir ?? process.cwd(), loader: 'js' } };
  const result = await build({
    ...input,
    ...(options.absWorkingDir ? { absWorkingDir: options.absWorkingDir } : {}),
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    logLevel: 'silent',
    external: options.external ?? [],
    plugins: [noNode],
  });
  const code = result.outputFiles?.[0]?.contents ?? new Uint8Array();
  return { reached, bytes: code.length, gzipped: gzipSync(code).length, code: new TextDecoder().decode(code) };
}
