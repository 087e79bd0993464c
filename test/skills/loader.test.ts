import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PackageError } from '../../src/core/errors.js';
import { REQUEST_TAG, bundledPackagesDir, loadPackage, loadPackages } from '../../src/skills/index.js';
import type { SkillPackage } from '../../src/skills/index.js';

/** Every input tag is the request or written by a worker listed earlier. */
function expectRunnableChain(pkg: SkillPackage) {
  const available = new Set([REQUEST_TAG]);
  for (const worker of pkg.workers) {
    for (const tag of worker.inputTags) expect(available, `${worker.id} reads ${tag}`).toContain(tag);
    for (const tag of worker.outputTags) available.add(tag);
  }
}

describe('bundled packages', () => {
  const packages = loadPackages();

  it('ships the file-notes, research-brief, short-story and tiny packages', () => {
    expect([...packages.keys()]).toEqual(['file-notes', 'research-brief', 'short-story', 'tiny']);
    expect(packages.get('tiny')?.dir).toBe(join(bundledPackagesDir, 'tiny'));
  });

  it('short-story chains brief → outline → draft → critique', () => {
    const story = packages.get('short-story')!;
    const chain = story.workers.map((w) => [w.id, w.inputTags, w.outputTags]);
    expect(chain).toEqual([
      ['brief-writer', ['request'], ['brief']],
      ['outliner', ['request', 'brief'], ['outline']],
      ['drafter', ['brief', 'outline'], ['draft']],
      ['critic', ['brief', 'draft'], ['critique']],
    ]);
    expectRunnableChain(story);
  });

  it('gives the drafter a literary and a genre role', () => {
    const drafter = packages.get('short-story')!.workers.find((w) => w.id === 'drafter')!;
    expect(drafter.roles.map((r) => r.id)).toEqual(['literary', 'genre']);
    expect(drafter.prompt).toContain('`literary`');
    expect(drafter.prompt).toContain('`genre`');
  });

  it('tells every short-story worker to submit exactly its output tags and when to ask', () => {
    for (const worker of packages.get('short-story')!.workers) {
      expect(worker.prompt).toContain(`outputs: { "${worker.outputTags[0]}":`);
      expect(worker.prompt).toContain('ask_user');
      expect(worker.prompt.split('\n').length).toBeGreaterThan(40);
    }
  });

  it('research-brief runs three researchers on the request alone, then a writer on their three notes', () => {
    const research = packages.get('research-brief')!;
    expect(research.workers.map((w) => [w.id, w.inputTags, w.outputTags])).toEqual([
      ['fact-finder', ['request'], ['facts']],
      ['angle-finder', ['request'], ['angles']],
      ['risk-finder', ['request'], ['risks']],
      ['writer', ['request', 'facts', 'angles', 'risks'], ['brief']],
    ]);
    expectRunnableChain(research);
    for (const worker of research.workers) {
      expect(worker.prompt).toContain(`outputs: { "${worker.outputTags[0]}":`);
      expect(worker.prompt).toContain('ask_user');
      expect(worker.prompt.split('\n').length).toBeGreaterThan(40);
    }
  });

  it('tiny chains request → note → summary', () => {
    const tiny = packages.get('tiny')!;
    expect(tiny.workers.map((w) => [w.id, w.inputTags, w.outputTags, w.roles])).toEqual([
      ['echo', ['request'], ['note'], []],
      ['summarize', ['note'], ['summary'], []],
    ]);
    expectRunnableChain(tiny);
  });
});

type FrontMatter = Record<string, unknown>;

/** JSON values are valid YAML, so front matter can be written without a YAML library; undefined drops a field. */
function workerFile(frontMatter: FrontMatter, body = 'You are a worker. Finish by calling `submit`.') {
  const lines = Object.entries(frontMatter)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  return `---\n${lines.join('\n')}\n---\n${body}\n`;
}

const briefWorker: FrontMatter = {
  id: 'briefer',
  title: 'Briefer',
  description: 'Writes the brief.',
  inputTags: ['request'],
  outputTags: ['brief'],
};
const outlinerWorker: FrontMatter = {
  id: 'outliner',
  title: 'Outliner',
  description: 'Writes the outline.',
  inputTags: ['request', 'brief'],
  outputTags: ['outline'],
};

describe('loading a package from disk', () => {
  let root: string;
  let dir: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'steward-skills-'));
    dir = join(root, 'demo');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function write(relativePath: string, content: string) {
    const file = join(dir, relativePath);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }

  /** A valid two-worker package; tests then break one thing. */
  function writeValidPackage(manifest: Record<string, unknown> = {}) {
    write(
      'manifest.json',
      JSON.stringify({
        schemaVersion: 1,
        id: 'demo',
        title: 'Demo',
        description: 'A demo package.',
        workers: ['briefer', 'outliner'],
        ...manifest,
      }),
    );
    write('workers/briefer.md', workerFile(briefWorker));
    write('workers/outliner.md', workerFile(outlinerWorker));
  }

  /** Runs `load`, expects a PackageError and returns its message. */
  function refusal(load: () => unknown): string {
    try {
      load();
    } catch (error) {
      expect(error).toBeInstanceOf(PackageError);
      return (error as PackageError).message;
    }
    throw new Error('expected the package to be refused');
  }

  const manifestPath = () => join(dir, 'manifest.json');
  const outlinerPath = () => join(dir, 'workers', 'outliner.md');

  it('loads a valid package with its workers in manifest order', () => {
    writeValidPackage();
    const pkg = loadPackage(dir);
    expect(pkg).toMatchObject({ id: 'demo', title: 'Demo', description: 'A demo package.', dir });
    expect(pkg.workers.map((w) => w.id)).toEqual(['briefer', 'outliner']);
    expect(pkg.workers[0]).toEqual({
      id: 'briefer',
      title: 'Briefer',
      description: 'Writes the brief.',
      inputTags: ['request'],
      outputTags: ['brief'],
      roles: [],
      approval: 'model',
      tools: [],
      prompt: 'You are a worker. Finish by calling `submit`.',
    });
    expect(loadPackages(root).get('demo')?.workers).toHaveLength(2);
  });

  it('reads roles from the front matter', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, roles: [{ id: 'terse', description: 'Short scenes.' }] }));
    expect(loadPackage(dir).workers[1]?.roles).toEqual([{ id: 'terse', description: 'Short scenes.' }]);
  });

  it('refuses malformed JSON in the manifest', () => {
    writeValidPackage();
    write('manifest.json', '{ "schemaVersion": 1, ');
    const message = refusal(() => loadPackage(dir));
    expect(message).toContain(manifestPath());
    expect(message).toContain('not valid JSON');
  });

  it('refuses a missing manifest field', () => {
    writeValidPackage({ title: undefined });
    const message = refusal(() => loadPackage(dir));
    expect(message).toContain(`${manifestPath()}: manifest field "title" must be a short human-readable title (got: undefined)`);
  });

  it('refuses a missing front matter field with a message that says what to write', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, outputTags: undefined }));
    expect(refusal(() => loadPackage(dir))).toBe(
      `${outlinerPath()}: front matter field "outputTags" must be a non-empty array of tags like "outline" (got: undefined)`,
    );
  });

  it('refuses an unknown key in the manifest and in the front matter', () => {
    writeValidPackage({ author: 'me' });
    expect(refusal(() => loadPackage(dir))).toMatch(/manifest\.json: manifest has unknown field "author".*allowed fields: schemaVersion, id/);

    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, outputTag: 'outline' }));
    const message = refusal(() => loadPackage(dir));
    expect(message).toContain(`${outlinerPath()}: front matter has unknown field "outputTag"`);
  });

  it('refuses a worker listed in the manifest without a file', () => {
    writeValidPackage({ workers: ['briefer', 'outliner', 'drafter'] });
    const message = refusal(() => loadPackage(dir));
    expect(message).toContain(join(dir, 'workers', 'drafter.md'));
    expect(message).toContain('file not found');
    expect(message).toContain('field "workers"');
  });

  it('refuses a worker file the manifest does not list', () => {
    writeValidPackage({ workers: ['briefer'] });
    const message = refusal(() => loadPackage(dir));
    expect(message).toContain(`${outlinerPath()}: worker "outliner" is not listed`);
  });

  it('refuses a front matter id that differs from the file name', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, id: 'planner' }));
    expect(refusal(() => loadPackage(dir))).toContain(`${outlinerPath()}: front matter field "id" must equal the file name "outliner" (got: "planner")`);
  });

  it('refuses a manifest id that differs from the folder name', () => {
    writeValidPackage({ id: 'other' });
    expect(refusal(() => loadPackage(dir))).toContain(`${manifestPath()}: manifest field "id" must equal the folder name "demo"`);
  });

  it('refuses a malformed tag and names the offending entry', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, outputTags: ['out line'] }));
    const message = refusal(() => loadPackage(dir));
    expect(message).toContain(`${outlinerPath()}: front matter field "outputTags[0]" must be a tag like "outline"`);
    expect(message).toContain('(got: "out line")');
  });

  it('refuses a broken chain: an input tag that no worker writes', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, inputTags: ['request', 'breif'] }));
    const message = refusal(() => loadPackage(dir));
    expect(message).toContain(`${outlinerPath()}: front matter field "inputTags" contains "breif"`);
    expect(message).toContain('chain is broken');
    expect(message).toContain('"request", "brief", "outline"');
  });

  it('refuses workers listed before the worker whose output they read', () => {
    writeValidPackage({ workers: ['outliner', 'briefer'] });
    expect(refusal(() => loadPackage(dir))).toContain(`${manifestPath()}: manifest field "workers" lists "outliner" before "briefer"`);
  });

  it('refuses a worker that reads its own output tag', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, inputTags: ['brief', 'outline'] }));
    expect(refusal(() => loadPackage(dir))).toContain(`${outlinerPath()}: front matter field "inputTags" contains "outline", which this worker writes itself`);
  });

  it('refuses two workers writing the same output tag', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile({ ...outlinerWorker, outputTags: ['brief'] }));
    expect(refusal(() => loadPackage(dir))).toContain(
      `${outlinerPath()}: front matter field "outputTags" contains "brief", which worker "briefer" already writes`,
    );
  });

  it('refuses a worker that claims to write the request tag', () => {
    writeValidPackage();
    write('workers/briefer.md', workerFile({ ...briefWorker, outputTags: ['request'] }));
    expect(refusal(() => loadPackage(dir))).toContain('front matter field "outputTags" must not contain "request"');
  });

  it('refuses an empty prompt', () => {
    writeValidPackage();
    write('workers/outliner.md', workerFile(outlinerWorker, '   \n'));
    expect(refusal(() => loadPackage(dir))).toContain(`${outlinerPath()}: the prompt is empty`);
  });

  it('refuses a worker file without front matter or with broken YAML', () => {
    writeValidPackage();
    write('workers/outliner.md', 'Just a prompt.\n');
    expect(refusal(() => loadPackage(dir))).toContain(`${outlinerPath()}: no YAML front matter`);

    write('workers/outliner.md', '---\nid: outliner\ntitle: Outliner: the one\n---\nPrompt.\n');
    expect(refusal(() => loadPackage(dir))).toContain(`${outlinerPath()}: the front matter is not valid YAML`);
  });

  it('never runs front matter: ---js / ---javascript are refused before anything is evaluated', () => {
    const marker = join(root, 'pwned.txt');
    // Valid as JavaScript and as a worker: a front matter reader with a JS engine (gray-matter's) would run it and accept the package.
    const code =
      `{ id: (require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran'), 'outliner'), title: ` +
      `'Outliner', description: 'Writes the outline.', inputTags: ['request', 'brief'], outputTags: ` +
      `['outline'] }`;
    for (const language of ['js', 'javascript', 'JS ', 'coffee', 'json', 'constructor']) {
      writeValidPackage();
      write('workers/outliner.md', `---${language}\n${code}\n---\nYou are a worker.\n`);
      const message = refusal(() => loadPackage(dir));
      expect(existsSync(marker), `---${language} ran code`).toBe(false);
      expect(message).toContain(`${outlinerPath()}: front matter language "${language.trim()}" is not allowed`);
      expect(message).toContain('YAML');
    }
  });

  it('reports a refused front matter language together with the other problems of the package', () => {
    writeValidPackage();
    write('workers/briefer.md', workerFile({ ...briefWorker, title: '' }));
    write('workers/outliner.md', '---javascript\n{}\n---\nPrompt.\n');
    const message = refusal(() => loadPackage(dir));
    expect(message).toMatch(/has 2 problems/);
    expect(message).toContain('front matter field "title"');
    expect(message).toContain(`${outlinerPath()}: front matter language "javascript" is not allowed`);
  });

  it('reads YAML with a safe schema: no !!js/function, !!js/regexp or !!js/undefined', () => {
    for (const tag of ['!!js/function "function () { return 1 }"', '!!js/regexp /x/', '!!js/undefined ""']) {
      writeValidPackage();
      write(
        'workers/outliner.md',
        `---\nid: outliner\ntitle: Outliner\ndescription: ${tag}\ninputTags: [request, brief]\noutputTags: [outline]\n---\nPrompt.\n`,
      );
      expect(
        refusal(() => loadPackage(dir)),
        tag,
      ).toContain(`${outlinerPath()}: the front matter is not valid YAML`);
    }
    // A "__proto__" key in YAML is an own key (refused as unknown), never the prototype.
    writeValidPackage();
    write('workers/outliner.md', workerFile(outlinerWorker).replace('---\n', '---\n__proto__:\n  polluted: true\n'));
    expect(refusal(() => loadPackage(dir))).toContain('has unknown field "__proto__"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // An explicit "---yaml" (or "---yml") opening is still YAML.
    writeValidPackage();
    write('workers/outliner.md', workerFile(outlinerWorker).replace(/^---\n/, '---yaml\n'));
    expect(loadPackage(dir).workers[1]!.id).toBe('outliner');
  });

  it('reports every problem of a package at once', () => {
    writeValidPackage();
    write('workers/briefer.md', workerFile({ ...briefWorker, title: '' }));
    write('workers/outliner.md', workerFile(outlinerWorker, ''));
    const message = refusal(() => loadPackage(dir));
    expect(message).toMatch(/has 2 problems/);
    expect(message).toContain('front matter field "title" must be a short human-readable title, not empty');
    expect(message).toContain(`${outlinerPath()}: the prompt is empty`);
  });

  it('refuses a missing manifest, a missing packages folder and an empty one', () => {
    mkdirSync(dir);
    expect(refusal(() => loadPackage(dir))).toContain(`${manifestPath()}: file not found`);
    expect(refusal(() => loadPackages(root))).toContain(`${manifestPath()}: file not found`);

    rmSync(dir, { recursive: true });
    expect(refusal(() => loadPackages(root))).toContain('no skill packages found');
    expect(refusal(() => loadPackages(join(root, 'nope')))).toContain(`${join(root, 'nope')}: packages folder not found`);
  });
});

describe('loading several packages folders', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'steward-skills-many-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** `folder/id`: a copy of the bundled tiny package under another id and title. */
  function copyTiny(folder: string, id: string, title = id): string {
    const target = join(root, folder, id);
    cpSync(join(bundledPackagesDir, 'tiny'), target, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(target, 'manifest.json'), JSON.stringify({ ...manifest, id, title }));
    return join(root, folder);
  }

  it('merges the folders, sorted by id; a bundled package gives way to yours in either order', () => {
    const mine = copyTiny('mine', 'tiny', 'My tiny');
    copyTiny('mine', 'alpha');
    expect([...loadPackages([bundledPackagesDir, mine]).keys()]).toEqual(['alpha', 'file-notes', 'research-brief', 'short-story', 'tiny']);
    expect(loadPackages([bundledPackagesDir, mine]).get('tiny')?.title).toBe('My tiny');
    expect(loadPackages([mine, bundledPackagesDir]).get('tiny')?.title).toBe('My tiny');
  });

  it('refuses an id defined in two of your folders, a package folder given as a packages folder, and no folder at all', () => {
    const one = copyTiny('one', 'twice');
    const two = copyTiny('two', 'twice');
    expect(refusalOf(() => loadPackages([one, two]))).toContain(`Package "twice" is defined twice: in ${join(one, 'twice')} and in ${join(two, 'twice')}`);
    expect(refusalOf(() => loadPackages(join(one, 'twice')))).toContain(`pass the folder that holds it: ${one}`);
    expect(refusalOf(() => loadPackages([]))).toContain('pass at least one folder');
  });
});

function refusalOf(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(PackageError);
    return (error as Error).message;
  }
  throw new Error('expected a PackageError');
}
