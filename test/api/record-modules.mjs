// A module hook (node --import) that appends every module a process loads — resolved URL,
// builtins included — to the file named by STEWARD_MODULE_LOG, one per line.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(log, resolved.url + '\\n');
  return resolved;
}`),
  { data: { log: process.env.STEWARD_MODULE_LOG } },
);
