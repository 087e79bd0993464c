/**
 * Answers that tell a client to come back (a session running elsewhere, a lease lost, a server
 * stopping, a locked store) carry Retry-After from one table; others carry none.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorHandler, HttpError, retryAfterOf, sessionRunningElsewhere } from '../../src/http/errors.js';

function appThrowing(error: Error) {
  const app = new Hono();
  app.onError(errorHandler('test', () => {}));
  app.get('/', () => {
    throw error;
  });
  return app;
}

describe('Retry-After on error answers', () => {
  it('a session running elsewhere: 409 with Retry-After: 1', async () => {
    const answer = await appThrowing(sessionRunningElsewhere('s1', 'running.manager.thinking', 'Wait until it waits.')).request('/');
    expect(answer.status).toBe(409);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('session_running_elsewhere');
  });

  it('a server stopping: 503 with Retry-After: 1; a refusal the session made: none', async () => {
    const stopping = await appThrowing(new HttpError(503, 'server_stopping', 'Shutting down.')).request('/');
    expect(stopping.headers.get('retry-after')).toBe('1');
    const refused = await appThrowing(new HttpError(409, 'event_refused', 'Not now.')).request('/');
    expect(refused.headers.get('retry-after')).toBeNull();
  });

  it('the table: come back for running elsewhere, lease lost, stopping and a locked store; not for a refusal or a missing session', () => {
    expect(['server_busy', 'session_running_elsewhere', 'lease_lost', 'server_stopping', 'store_locked'].map(retryAfterOf)).toEqual([1, 1, 1, 1, 1]);
    expect(['event_refused', 'session_not_found', 'conflict'].map(retryAfterOf)).toEqual([undefined, undefined, undefined]);
  });
});
