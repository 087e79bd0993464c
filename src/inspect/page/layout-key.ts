/// <reference lib="dom" />
/**
 * The key a laid-out chart is kept under (routes/layouts.ts): a SHA-256 of what ELK is asked
 * (`elkGraph`: the chart, its measured text and the options) and of the ELK build that answers
 * (its worker script's path, which names its content), so a kept layout is used only for the input and
 * the ELK that made it. Null where the page has no Web Crypto: it then lays out every time.
 */
import type { ElkNode } from 'elkjs/lib/elk-api.js';

/**
 * @example
 * const key = await layoutKey(elkGraph(graph, measure), '/assets/elk-worker.min-J_vVZCZ4.js'); // 64 hex digits, or null
 */
export async function layoutKey(input: ElkNode, elkBuild: string): Promise<string | null> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return null;
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify([elkBuild, input])));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
