import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Imports point one way (cli → runtime → machines…): the chart and the browser-safe entry
// must build without the runtime that drives them.
const root = join(import.meta.dirname, '../../src');

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map((m) => m[1]!);
}

describe('layers', () => {
  it('nothing under src/machines imports the runtime', () => {
    const offenders = readdirSync(join(root, 'machines'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        importsOf(join(root, 'machines', name))
          .filter((spec) => spec.includes('/runtime/'))
          .map((spec) => `${name}: ${spec}`),
      );
    expect(offenders).toEqual([]);
  });
});
