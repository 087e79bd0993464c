#!/usr/bin/env node
// `node tsc-projects.mjs tsconfig.a.json tsconfig.b.json …` in an app's folder: what `tsc -p` says
// of each project, all checked in this one process, as `tsc -b` does (TypeScript's solution
// builder): the projects share what they have in common (the declaration files they read), which
// separate `tsc -p` processes would each read and parse again. Prints a JSON object: project →
// tsc's diagnostics for it, as text ('' when it compiles); a project the builder did not check
// says so, so it cannot pass unseen. Forced: a build info file left in the folder skips nothing.
// See type-check.ts.
import ts from 'typescript';

const projects = process.argv.slice(2);
const host = ts.createSolutionBuilderHost(ts.sys, undefined, (diagnostic) => diagnostics.push(diagnostic));
const format = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};
/** What the builder reports before or between projects (e.g. a tsconfig it cannot read): every project's. */
const general = [];
let diagnostics = general;
const reports = new Map();
const builder = ts.createSolutionBuilder(host, projects, { force: true });
for (let next = builder.getNextInvalidatedProject(); next; next = builder.getNextInvalidatedProject()) {
  diagnostics = [];
  reports.set(next.project, diagnostics);
  next.done();
  diagnostics = general;
}
const out = {};
for (const project of projects) {
  const own = reports.get(ts.sys.resolvePath(project));
  out[project] = own ? ts.formatDiagnostics([...general, ...own], format) : `${project}: not checked`;
}
process.stdout.write(JSON.stringify(out));
