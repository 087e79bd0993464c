/**
 * The error classes as an app meets them: one code union, `isInstance` that holds across two
 * installed copies of Steward (where `instanceof` does not; minified bundles:
 * test/api/errors-bundle.test.ts), the HTTP servers' errors among them, and Steward's own
 * bugs reported as internal errors — a 500 over HTTP, never a 400 that blames the caller.
 */
import { copyFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { InternalError, LimitExceededError, SessionNotFoundError, StewardError, StoreError, UserError, type StewardErrorCode } from '../../src/index.js';
import { createWorkerTurn } from '../../src/machine.js';
import { ScriptedModel } from '../../src/testing.js';
import type { SessionContext } from '../../src/core/machines/session.context.js';
import { HttpError, statusOf, toHttpError } from '../../src/http/errors.js';
import { root } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-errors-');

describe('isInstance', () => {
  it('knows each class and its bases, also for an error from another copy of Steward', async () => {
    const file = tmp.path('errors-copy.ts');
    copyFileSync(`${root}/src/core/errors.ts`, file);
    const other = (await import(pathToFileURL(file).href)) as typeof import('../../src/core/errors.js');
    const foreign = new other.SessionNotFoundError('s_gone');
    expect(foreign instanceof SessionNotFoundError).toBe(false);
    expect(SessionNotFoundError.isInstance(foreign)).toBe(true);
    expect(StewardError.isInstance(foreign)).toBe(true);
    expect(UserError.isInstance(foreign)).toBe(false);
    if (SessionNotFoundError.isInstance(foreign)) expect(foreign.sessionId).toBe('s_gone');

    const limit = new LimitExceededError('too long', 'userTextChars', 10, 11);
    expect([StewardError.isInstance(limit), LimitExceededError.isInstance(limit), StoreError.isInstance(limit)]).toEqual([true, true, false]);
    // Coded errors that are not ours, and look-alikes, are not Steward errors.
    const nodeError = Object.assign(new Error('busy'), { code: 'user_error' });
    expect([StewardError.isInstance(nodeError), StewardError.isInstance({ code: 'user_error', message: 'x' }), StewardError.isInstance(null)]).toEqual([
      false,
      false,
      false,
    ]);
    // The markers stay out of logs and JSON.
    const markers = Object.getOwnPropertySymbols(limit);
    expect(markers.map(String)).toEqual(['Symbol(steward.error.LimitExceededError)', 'Symbol(steward.error.StewardError)']);
    expect(markers.some((s) => Object.getOwnPropertyDescriptor(limit, s)!.enumerable)).toBe(false);
  });
});

describe('InternalError', () => {
  it("marks Steward's own bugs: a worker turn without a step fails with internal_error, a 500 over HTTP", async () => {
    const turn = createActor(
      createWorkerTurn(new ScriptedModel([]), () => 'prompt'),
      { input: {} as SessionContext },
    ).start();
    const error = await toPromise(turn).catch((e: unknown) => e);
    expect(InternalError.isInstance(error)).toBe(true);
    expect(UserError.isInstance(error)).toBe(false);
    const code: StewardErrorCode = (error as InternalError).code;
    expect(code).toBe('internal_error');
    expect((error as Error).message).toMatch(/bug in Steward/);
    expect(toHttpError(error).status).toBe(500);
  });
});

describe('HttpError', () => {
  it("is a Steward error with a code of the union, its status and its body; a code that is not Steward's answers as an internal error", () => {
    const error = new HttpError(400, 'invalid_reply', 'A reply looks like { content?, toolCalls: [{ name, arguments }] }.');
    expect([StewardError.isInstance(error), HttpError.isInstance(error), UserError.isInstance(error), error.name]).toEqual([true, true, false, 'HttpError']);
    expect(error.body()).toEqual({ error: { code: 'invalid_reply', message: error.message } });
    expect([statusOf('invalid_reply'), statusOf('server_busy'), statusOf('session_not_found'), statusOf('no_such_code')]).toEqual([400, 429, 404, 500]);
    // An AG-UI refusal's own code, thrown where only HTTP answers: no code a client does not know.
    const logged: string[] = [];
    const answer = toHttpError({ code: 'thread_running', message: 'Thread t1 is running.' }, (details) => logged.push(details));
    expect([answer.status, answer.code, logged]).toEqual([500, 'internal_error', ['thread_running: Thread t1 is running.']]);
  });
});
