/**
 * Where a load server's time went, from the CPU profile it wrote (`LOAD_CPU_PROF=DIR`): each
 * sample is put in a part by the nearest frame on its stack that belongs to one (a builtin
 * such as JSON.parse counts for whoever called it), so the shares add up to the whole run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The parts, first match wins: a frame's function name for V8's own entries, else its file. */
const PARTS: ReadonlyArray<{ part: string; is: (url: string, fn: string) => boolean }> = [
  { part: 'idle (waiting for I/O)', is: (_url, fn) => fn === '(idle)' },
  { part: 'garbage collection', is: (_url, fn) => fn === '(garbage collector)' },
  { part: 'SQLite (better-sqlite3, the store, its fsync)', is: (url) => /better-sqlite3|\/src\/store\/(sqlite-|store-json|wal-flush)/.test(url) },
  { part: 'PostgreSQL (pg, the store)', is: (url) => /node_modules\/pg|\/src\/store\/postgres-/.test(url) },
  { part: 'model client (openai SDK, fetch)', is: (url) => /node_modules\/openai|undici|webstreams|\/src\/models\/openai-/.test(url) },
  { part: 'XState', is: (url) => /node_modules\/xstate/.test(url) },
  { part: 'zod', is: (url) => /node_modules\/zod/.test(url) },
  // Sockets and streams (node:net, internal/streams) carry every connection alike, the database's too: they stay in "other".
  { part: 'HTTP server (node:http, hono, routes)', is: (url) => /hono|node:_http_|\/src\/http\/|\/src\/serve\/(app|routes)/.test(url) },
  { part: 'Steward, the rest of src/', is: (url) => /\/src\//.test(url) },
  { part: 'the bench’s own measuring', is: (url) => /\/bench\/load\//.test(url) },
];
const OTHER = 'other (Node internals: sockets, streams, timers, microtasks)';

/** Seconds by part, largest first, and the whole. */
export function profileParts(profile: CpuProfile): { seconds: number; parts: Array<{ part: string; seconds: number }> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const partOf = new Map<number, string>();
  const part = (id: number): string => {
    const known = partOf.get(id);
    if (known !== undefined) return known;
    const { url, functionName } = byId.get(id)!.callFrame;
    const parent = parentOf.get(id);
    const found = PARTS.find((p) => p.is(url, functionName))?.part ?? (parent === undefined ? OTHER : part(parent));
    partOf.set(id, found);
    return found;
  };
  const micros = new Map<string, number>();
  let whole = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    whole += dt;
    micros.set(part(id), (micros.get(part(id)) ?? 0) + dt);
  });
  return {
    seconds: whole / 1e6,
    parts: [...micros].map(([name, us]) => ({ part: name, seconds: us / 1e6 })).sort((a, b) => b.seconds - a.seconds),
  };
}

/** `LOAD_CPU_PROF`, the folder the servers write their CPU profiles into, made absolute here (the servers run from the project's folder); null when unset. */
export function profileDir(): string | null {
  return process.env.LOAD_CPU_PROF ? resolve(process.env.LOAD_CPU_PROF) : null;
}

/**
 * The newest profile the process `pid` wrote into `dir`, if any. Node names it
 * CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile, so the names sort by time, and a folder
 * used for several runs may hold an older process's of the same pid.
 */
export function profileOf(dir: string, pid: number): CpuProfile | null {
  const name = readdirSync(dir)
    .filter((file) => file.endsWith('.cpuprofile') && file.split('.')[3] === String(pid))
    .sort()
    .at(-1);
  return name ? (JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile) : null;
}

/** One line: each part's share of the server's run, largest first. */
export function profileLine(profile: CpuProfile): string {
  const { seconds, parts } = profileParts(profile);
  const shown = parts.map((p) => ({ ...p, percent: (100 * p.seconds) / Math.max(seconds, 1e-9) })).filter((p) => p.percent >= 0.5);
  return `${shown.map((p) => `${p.part} ${p.percent.toFixed(0)}%`).join(', ')} (of ${seconds.toFixed(0)} s profiled; parts under 0.5% left out)`;
}
