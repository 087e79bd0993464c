/**
 * The files of a starter package (`steward init-package NAME`): a two-worker chain whose
 * worker files explain each field in YAML comments, valid as written, to edit into your own.
 */

/** Relative path → text of each file of a starter package with this id. */
export function starterPackageFiles(id: string): Record<string, string> {
  const manifest = {
    schemaVersion: 1,
    id,
    title: `${id} (starter package)`,
    description:
      'A starter package: a researcher gathers notes on the request, a writer turns them into an answer. ' +
      'The manager sees this description when it chooses a package; edit it to say what your team does.',
    workers: ['researcher', 'writer'],
  };
  return {
    'manifest.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'workers/researcher.md': `---
# The worker's id: its file name without ".md", listed in manifest.json "workers" (in chain order).
id: researcher
# A short title, shown in \`steward packages\`, the inspector and the CLI.
title: Researcher
# One line the manager sees in its worker list when it picks who works next.
description: Gathers the facts and open questions the request raises, as notes.
# The tags this worker reads: "request" (the user's request) or tags an earlier worker writes.
inputTags: [request]
# The tags it writes with \`submit\` (at least one; each tag has one writer in the package).
outputTags: [notes]
# Optional: roles the manager may give this worker, e.g.
# roles:
#   - { id: concise, description: Notes of at most ten lines. }
---
You are the researcher of the ${id} package. Everything below the front matter is your prompt.

Read the \`request\` tag and write Markdown notes: the facts the answer needs, the assumptions
you make, and the questions left open.

Finish by calling \`submit\` with \`outputs: { "notes": "<the notes>" }\`. Call \`ask_user\` only
if the request cannot be understood.
`,
    'workers/writer.md': `---
id: writer
title: Writer
description: Writes the answer from the request and the researcher's notes.
# Reads the request and the notes the researcher wrote before it.
inputTags: [request, notes]
outputTags: [answer]
---
You are the writer of the ${id} package.

Read the \`request\` and the \`notes\` tags and write the answer in Markdown, addressing every
point of the request.

Finish by calling \`submit\` with \`outputs: { "answer": "<the answer>" }\`.
`,
  };
}
