/** A skill package of one worker that calls one MCP server's tools, written to a temp folder, and the server's log of what reached it. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface McpPackageSpec {
  id: string;
  title: string;
  description: string;
  /** The worker's id, its description and its prompt; it may call every tool of `server`. */
  worker: { id: string; description: string; prompt: string };
  server: string;
  /** The server's manifest entry, given the path of the log file it should append one JSON line per call to. */
  entry: (log: string) => Record<string, unknown>;
}

/** The package folder's parent (createRuntime's packagesDir), and the lines the server logged, parsed. */
export function writeMcpPackage<Line>(spec: McpPackageSpec): { packagesDir: string; log: string; lines: () => Line[] } {
  const root = mkdtempSync(join(tmpdir(), `steward-${spec.id}-`));
  const dir = join(root, 'packages', spec.id);
  mkdirSync(join(dir, 'workers'), { recursive: true });
  const log = join(root, 'calls.jsonl');
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      schemaVersion: 1,
      id: spec.id,
      title: spec.title,
      description: spec.description,
      workers: [spec.worker.id],
      mcpServers: { [spec.server]: spec.entry(log) },
    }),
  );
  const { id, description, prompt } = spec.worker;
  const title = id[0]!.toUpperCase() + id.slice(1);
  writeFileSync(
    join(dir, 'workers', `${id}.md`),
    `---\nid: ${id}\ntitle: ${title}\ndescription: ${description}\ninputTags: [request]\noutputTags: [note]\ntools: ["${spec.server}.*"]\n---\n${prompt}\n`,
  );
  const lines = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Line)
      : [];
  return { packagesDir: join(root, 'packages'), log, lines };
}
