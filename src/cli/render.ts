/**
 * Sessions for humans: what the session waits for, an artifact's tag bodies, the journal.
 * Everything returns text (or blocks of text); the caller decides where it goes (clack in
 * the interactive `run`, plain stdout in scripts and transcripts). Colours come from
 * picocolors, as the command passes them for its own output (./colors.ts): never picocolors' own
 * decision, which is the process's, and a command may run inside another program.
 * Everything a model, a package or a user wrote goes through text/safe-text.ts here, before any
 * colour is added: the renderers are where data meets the terminal.
 */
import { shortHash } from '../skills/package-version.js';
import { approvalReasonText } from '../core/machines/approval.js';
import { stateString } from '../core/machines/refusals.js';
import type { SessionContext } from '../core/machines/session.context.js';
import type { SkillPackage } from '../skills/index.js';
import { userOf, type JournalEntry, type SessionSummary } from '../store/session-store.js';
import { isForkEntry } from '../runtime/journal-replay.js';
import type { SessionView } from '../core/view.js';
import { aliasOf } from './events.js';
import { safeLine, safeText } from '../text/safe-text.js';
import { pendingCalls, toolCallBlocks } from './tool-calls.js';
import { askingCall, interruptedCall, interruptedCallBlocks, toolInputBlocks } from './tool-waits.js';
import { waitTermsLines } from '../core/wait-terms.js';
import type { Colors } from './colors.js';
import { proposedStepBlocks, reviewedArtifactBlocks, teamHeadline, teamLines, teamRunningLabel } from './team-render.js';

export type Tone = 'info' | 'step' | 'warn' | 'error' | 'success';

/** One titled piece of output: a manager message, a proposed step, one tag of an artifact… */
export interface Block {
  title: string;
  body: string;
  tone: Tone;
}

export interface RenderOptions {
  /** The model's label, shown on model output ("demo model (no LLM)", "gpt-4o-mini"). */
  modelLabel?: string;
  packages?: ReadonlyMap<string, SkillPackage>;
}

const by = (options: RenderOptions) => (options.modelLabel ? ` · ${options.modelLabel}` : '');

/** One line saying what the session waits for. */
export function headline(view: SessionView): string {
  return safeLine(headlineText(view));
}

function headlineText(view: SessionView): string {
  const team = teamHeadline(view);
  if (team) return team;
  switch (view.waitingReason) {
    case 'skill_selection':
      return 'Waiting for you: choose a package.';
    case 'intake':
      return view.blackboard.some((b) => b.tag === 'request')
        ? 'Waiting for you: answer the manager, or confirm your request as it is.'
        : 'Waiting for you: describe the work you want.';
    case 'input':
      return view.questions?.length ? 'Waiting for you: answer or skip the questions, or write a message.' : 'Waiting for you: write a message.';
    case 'approve_step':
      return `Waiting for you: approve or reject the next step (${view.pendingStep?.workerId ?? '?'}${
        view.pendingStep && view.approvalRequiredBy ? `, ${approvalReasonText(view.pendingStep, view.approvalRequiredBy)}` : ''
      }).`;
    case 'review_artifact':
      return `Waiting for you: accept or reject artifact ${view.artifact?.id ?? '?'} (${view.artifact?.workerId ?? '?'}).`;
    case 'worker_questions':
      return `Waiting for you: answer or skip the questions of ${view.pendingStep?.workerId ?? 'the worker'}.`;
    case 'revision':
      return `Waiting for you: describe the changes you want to artifact ${view.artifact?.id ?? '?'}.`;
    case 'approve_tool': {
      const waiting = pendingCalls(view).length;
      return `Waiting for you: approve or reject ${waiting === 1 ? 'a tool call' : `${waiting} tool calls, one at a time,`} of ${view.pendingStep?.workerId ?? 'the worker'}.`;
    }
    case 'tool_input': {
      const call = askingCall(view);
      const asked = call?.input?.requests.length ?? 0;
      return `Waiting for you: answer what ${call ? `${call.server}.${call.tool}` : 'a tool call'} asks (${asked === 1 ? '1 request' : `${asked} requests`}).`;
    }
    case 'tool_interrupted': {
      const call = interruptedCall(view);
      return `Waiting for you: ${call ? `${call.server}.${call.tool}` : 'a tool call'} was cut off when its process stopped; run it again, skip it, or give its result.`;
    }
    default:
      return view.phase === 'done' ? 'The session is done.' : `The agents are working (${view.state}).`;
  }
}

function questionList(questions: { id: string; text: string }[]): string {
  return questions.map((q) => `${q.id}. ${q.text}`).join('\n');
}

function tagList(tags: readonly string[]): string {
  return tags.length ? tags.join(', ') : '(none)';
}

/** What the session shows the user at its current wait (or at the end), made safe to print. */
export function waitBlocks(view: SessionView, options: RenderOptions = {}): Block[] {
  return rawWaitBlocks(view, options).map((b) => ({ title: safeLine(b.title), body: safeText(b.body), tone: b.tone }));
}

function rawWaitBlocks(view: SessionView, options: RenderOptions): Block[] {
  const blocks: Block[] = [];
  if (view.notice) blocks.push({ title: 'Notice', body: view.notice, tone: 'warn' });
  if (view.forkedFrom) blocks.push({ title: 'Fork', body: `Forked from ${view.forkedFrom.id} after journal entry ${view.forkedFrom.seq}.`, tone: 'info' });
  if (view.tokens?.maxBurst != null)
    blocks.push({
      title: 'Tokens',
      body: `${view.tokens.burst} of ${view.tokens.maxBurst} this burst (maxBurstTokens) · ${view.tokens.session} in the session`,
      tone: 'info',
    });
  if (view.phase === 'done') {
    blocks.push({ title: `Summary${by(options)}`, body: view.message ?? '(the manager finished without a summary)', tone: 'success' });
    return blocks;
  }
  if (view.message) blocks.push({ title: `Manager${by(options)}`, body: view.message, tone: 'info' });
  if (view.assessment) blocks.push({ title: `Assessment${by(options)}`, body: view.assessment, tone: 'info' });
  const terms = waitTermsLines(view);
  if (terms.length) blocks.push({ title: 'Deadline', body: terms.join('\n'), tone: 'warn' });
  const pkg = view.packageId ? options.packages?.get(view.packageId) : undefined;

  switch (view.waitingReason) {
    case 'skill_selection': {
      const list = [...(options.packages?.values() ?? [])].map((p) => `${p.id}: ${p.title} (${p.description})`).join('\n');
      blocks.push({ title: 'Packages', body: list || '(none)', tone: 'step' });
      break;
    }
    case 'intake':
      if (!view.blackboard.some((b) => b.tag === 'request')) {
        blocks.push({
          title: 'Your request',
          body: pkg ? `${pkg.title}: ${pkg.description}\nDescribe the work you want.` : 'Describe the work you want.',
          tone: 'step',
        });
      } else if (view.questions?.length) {
        blocks.push({ title: `Questions${by(options)}`, body: questionList(view.questions), tone: 'step' });
      }
      break;
    case 'input':
      if (view.questions?.length) blocks.push({ title: `Questions${by(options)}`, body: questionList(view.questions), tone: 'step' });
      break;
    case 'approve_step': {
      const step = view.pendingStep;
      if (!step) {
        // A fan-out: each proposed step is an item of its own.
        blocks.push(...proposedStepBlocks(view, pkg, by(options)));
        break;
      }
      const worker = pkg?.workers.find((w) => w.id === step.workerId);
      const lines = [
        `Reason: ${step.reason}`,
        ...(view.approvalRequiredBy ? [`Approval: ${approvalReasonText(step, view.approvalRequiredBy)}`] : []),
        ...(worker ? [`${worker.title}: ${worker.description}`, `Reads: ${tagList(worker.inputTags)} → writes: ${tagList(worker.outputTags)}`] : []),
        ...(worker?.roles.length ? [`Roles: ${worker.roles.map((r) => r.id).join(', ')}`] : []),
        'To change the reason or the role first: approve --reason TEXT --role ID ("Edit, then approve" in steward run).',
      ];
      blocks.push({
        title: `Proposed step · run ${step.workerId}${step.roleId ? ` as ${step.roleId}` : ''}${by(options)}`,
        body: lines.join('\n'),
        tone: 'step',
      });
      break;
    }
    case 'review_artifact':
    case 'revision': {
      const artifact = view.artifact;
      // A fan-in with several artifacts under review: each one, decided by its id.
      const fanIn = reviewedArtifactBlocks(view, by(options));
      if (fanIn.length) blocks.push(...fanIn);
      if (!artifact || fanIn.length) break;
      if (view.pendingStep?.proposed) {
        const p = view.pendingStep.proposed;
        blocks.push({
          title: `The step ran as edited${p.by ? ` by ${p.by}` : ''}`,
          body: `Reason: ${view.pendingStep.reason}${view.pendingStep.roleId ? `\nRole: ${view.pendingStep.roleId}` : ''}\n(the manager proposed: ${p.reason}${p.roleId ? `, role ${p.roleId}` : ''})`,
          tone: 'info',
        });
      }
      for (const { tag, version, body } of artifact.tags) {
        blocks.push({
          title: `Artifact ${artifact.id} by ${artifact.workerId}${artifact.roleId ? ` (${artifact.roleId})` : ''} · ${tag} v${version}${by(options)}`,
          body,
          tone: 'info',
        });
      }
      if (view.waitingReason === 'review_artifact' && artifact.questions?.length) {
        blocks.push({ title: `${artifact.workerId} also asks (accepting dismisses these)`, body: questionList(artifact.questions), tone: 'step' });
      }
      if (view.waitingReason === 'revision') {
        blocks.push({
          title: 'Revision',
          body: `You rejected ${artifact.id}. Describe the changes you want; ${artifact.workerId} will revise it.`,
          tone: 'step',
        });
      }
      break;
    }
    case 'worker_questions':
      if (view.questions?.length)
        blocks.push({ title: `${view.pendingStep?.workerId ?? 'The worker'} asks${by(options)}`, body: questionList(view.questions), tone: 'step' });
      break;
    case 'approve_tool':
      blocks.push(...toolCallBlocks(view));
      break;
    case 'tool_input':
      blocks.push(...toolInputBlocks(view));
      break;
    case 'tool_interrupted':
      blocks.push(...interruptedCallBlocks(view));
      break;
    default:
      break;
  }
  return blocks;
}

const toneColor = (c: Colors): Record<Tone, (s: string) => string> => ({
  info: c.cyan,
  step: c.magenta,
  warn: c.yellow,
  error: c.red,
  success: c.green,
});

/** Blocks as plain text: a rule with the title, then the body. */
export function formatBlocks(blocks: Block[], c: Colors): string {
  const tone = toneColor(c);
  return blocks.map((b) => `${tone[b.tone](c.bold(`── ${b.title} ──`))}\n${b.body}`).join('\n\n');
}

/** Accepted events as commands to type. */
export function actionHints(view: SessionView): string {
  return view.acceptedEvents.map((type) => `${aliasOf(type)} (${type})`).join(', ');
}

/** `steward show`: the whole session on one screen. */
export function formatSession(
  view: SessionView,
  revision: number | undefined,
  options: RenderOptions & {
    /** The colours of the output: the command's (./colors.ts), decided from where it writes. */
    colors: Colors;
  },
): string {
  const c = options.colors;
  const lines: string[] = [];
  lines.push(
    c.bold(`Session ${safeLine(view.id)}`) +
      c.dim(safeLine(` · package ${view.packageId ?? '(none yet)'} · ${view.state} · burst ${view.burst}/${view.maxBurst} · revision ${revision ?? '-'}`)),
  );
  lines.push(headline(view));
  const pinned = packageVersionLine(view);
  if (pinned) lines.push(pinned);
  if (view.phase === 'running')
    lines.push(safeLine(`If no process is running it (one was interrupted), \`steward run --session ${view.id}\` continues it: the model call runs again.`));
  const blocks = waitBlocks(view, options);
  if (blocks.length) lines.push('', formatBlocks(blocks, c));
  lines.push('');
  const team = teamLines(view);
  if (team.length) lines.push(c.bold('Team (workers at once): ') + team.map((t) => `\n  ${safeLine(t)}`).join(''));
  lines.push(
    c.bold('Blackboard: ') + safeLine(view.blackboard.length ? view.blackboard.map((b) => `${b.tag} v${b.version} (${b.writtenBy})`).join(', ') : '(empty)'),
  );
  lines.push(c.bold('Artifacts: ') + safeLine(view.artifacts.length ? view.artifacts.map((a) => `${a.id} ${a.workerId} ${a.status}`).join(', ') : '(none)'));
  lines.push(c.bold('Model rounds: ') + `${view.rounds} (tokens: ${view.usage.promptTokens} in, ${view.usage.completionTokens} out)`);
  const last = view.rejections.at(-1);
  if (last) lines.push(c.bold('Last refused event: ') + safeText(`${last.type} in ${last.state}: ${last.reason}`));
  if (view.acceptedEvents.length) {
    lines.push(c.bold('Send: ') + safeLine(`steward send ${view.id} <event>, where <event> is one of: ${actionHints(view)}`));
  }
  return lines.join('\n');
}

/** Which package version the session runs, and whether the disk holds a newer one (`steward upgrade`). */
function packageVersionLine(view: SessionView): string | undefined {
  if (view.packageId === null) return undefined;
  if (view.packageVersion === null) return safeLine(`Package version: not pinned yet (it is pinned to the package on disk when the session is next resumed).`);
  const line = `Package version: ${shortHash(view.packageVersion)} (pinned)`;
  if (!view.packageOnDisk) return safeLine(line);
  return safeLine(`${line}; the package on disk is newer (${shortHash(view.packageOnDisk)}): \`steward upgrade ${view.id}\` moves the session to it.`);
}

export function formatSessionList(sessions: SessionSummary[], c: Colors): string {
  if (sessions.length === 0) return 'No sessions yet. Start one with `steward run` or `steward new`.';
  const rows = sessions.map((s) => [s.id, s.packageId ?? '-', s.state, String(s.revision), s.updatedAt]);
  return table(['ID', 'PACKAGE', 'STATE', 'REV', 'UPDATED'], rows, c);
}

export function formatPackages(packages: ReadonlyMap<string, SkillPackage>, c: Colors): string {
  const out: string[] = [];
  for (const pkg of packages.values()) {
    out.push(`${c.bold(safeLine(pkg.id))}  ${safeLine(pkg.title)}`, `  ${safeLine(pkg.description)}`);
    for (const w of pkg.workers) {
      const roles = w.roles?.length ? `  roles: ${w.roles.map((r) => r.id).join(', ')}` : '';
      out.push(`  - ${c.cyan(safeLine(w.id))}: ${safeLine(`reads ${tagList(w.inputTags)} → writes ${tagList(w.outputTags)}${roles}`)}`);
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

function clip(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The gist of a journal entry's payload: the user's fields, the tool calls, the error. */
function payloadGist(entry: JournalEntry): string {
  const payload = (entry.payload ?? {}) as Record<string, unknown>;
  if (entry.kind === 'event') {
    // `at` (stamped by send()) is the AT column already; the surface it came through and the groups
    // it decided as are provenance, `steward audit`'s (and --format jsonl has them).
    const { type: _type, at: _at, by: _by, through: _through, groups: _groups, ...fields } = payload;
    return Object.keys(fields).length ? clip(JSON.stringify(fields)) : '';
  }
  if (entry.kind === 'actor') {
    const output = payload.output as { toolCalls?: { function: { name: string } }[]; content?: string | null } | undefined;
    if (output) {
      const calls = (output.toolCalls ?? []).map((c) => c.function.name);
      return calls.length ? `tools: ${calls.join(', ')}` : clip(`text: ${output.content ?? ''}`);
    }
    const error = payload.error as { message?: string } | undefined;
    if (error) return clip(`error: ${error.message ?? ''}`);
  }
  // A fork's first entry holds its whole starting snapshot: say where it came from instead.
  if (isForkEntry(entry)) {
    const from = payload.forkedFrom as { id?: string; seq?: number } | undefined;
    return `forked from ${from?.id ?? '?'} after entry ${from?.seq ?? '?'}`;
  }
  if (entry.kind === 'created') return clip(JSON.stringify(payload));
  return '';
}

export function formatJournal(entries: JournalEntry[], c: Colors): string {
  const rows = entries.map((e) => [String(e.seq), e.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z'), whoOf(e), e.kind, e.type, e.state, payloadGist(e)]);
  return table(['SEQ', 'AT', 'BY', 'KIND', 'TYPE', 'STATE AFTER', 'DETAIL'], rows, c);
}

/** Who acted: a user event's `by` (cut to 24 characters here; `--format jsonl` has it whole), "-" if none. */
function whoOf(entry: JournalEntry): string {
  if (entry.kind !== 'event') return '';
  const by = userOf(entry.payload);
  return by === undefined ? '-' : by.length > 24 ? `${by.slice(0, 23)}…` : by;
}

/** Cells are data (ids, package ids, journal gists): each is made one safe line first. */
function table(header: string[], dataRows: string[][], c: Colors): string {
  const rows = dataRows.map((r) => r.map(safeLine));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [c.bold(line(header)), ...rows.map(line)].join('\n');
}

/** While model turns run: who works, and the round of the burst (round k of at most maxBurst). */
export function runningLabel(snapshot: { status: string; value: unknown; context: SessionContext }, modelLabel: string): string | undefined {
  if (snapshot.status !== 'active') return undefined;
  const state = stateString(snapshot.value);
  if (!state.startsWith('running.')) return undefined;
  const { context } = snapshot;
  const team = teamRunningLabel(snapshot);
  const who = team ? safeLine(team) : state.startsWith('running.worker') ? `Worker ${safeLine(context.step?.workerId ?? '?')} writing` : 'Manager thinking';
  return `${who} · burst ${Math.min(context.burst + 1, context.maxBurst)}/${context.maxBurst} · ${modelLabel}`;
}
