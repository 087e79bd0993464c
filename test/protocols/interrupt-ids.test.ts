/**
 * The ids of AG-UI interrupts: each names its session's wait and, for a wait that asks about
 * several things, the one it asks about; an answer that names none is for that one, and an
 * answer naming another item is told apart.
 */
import { describe, expect, it } from 'vitest';
import {
  artifactItemInterruptId,
  interruptId,
  interruptWait,
  otherItemNamed,
  parseInterruptId,
  stepItemInterruptId,
  toolCallInterruptId,
  withInterruptTarget,
} from '../../src/protocols/ag-ui/interrupt-ids.js';

describe('interrupt ids', () => {
  it('name the wait, and the call, step or artifact, whatever characters those hold', () => {
    expect(parseInterruptId('s1', interruptId('s1', 3))).toEqual({ wait: 3, target: null });
    expect(parseInterruptId('s1', toolCallInterruptId('s1', 3, 'c/item/x'))).toEqual({ wait: 3, target: { callId: 'c/item/x' } });
    expect(parseInterruptId('s1', stepItemInterruptId('s1', 4, 'run~north'))).toEqual({ wait: 4, target: { item: 'run~north' } });
    expect(parseInterruptId('s1', artifactItemInterruptId('s1', 12, 'a2'))).toEqual({ wait: 12, target: { artifactId: 'a2' } });
    // A session id may hold what an id's suffix looks like: the prefix is the session's own.
    expect(parseInterruptId('a#w1~b', stepItemInterruptId('a#w1~b', 2, 'run_x'))).toEqual({ wait: 2, target: { item: 'run_x' } });
  });

  it('name no wait of the session when they are another session’s, or malformed', () => {
    for (const id of ['s2#w3', 's1#w', 's1#w0', 's1#wx', 's1#w3/other/x', 's1#w3x', 's1#w99999999999999999999']) expect(interruptWait('s1', id), id).toBeNull();
    // A suffix with nothing after it names the wait alone.
    expect(parseInterruptId('s1', 's1#w3/item/')).toEqual({ wait: 3, target: null });
  });

  it('give an answer that names nothing the target its interrupt names; one naming another item is told apart', () => {
    expect(withInterruptTarget('s1', 's1#w4/item/run_n', { approved: true })).toEqual({ approved: true, item: 'run_n' });
    expect(withInterruptTarget('s1', 's1#w5/artifact/a3', { accepted: false })).toEqual({ accepted: false, artifactId: 'a3' });
    expect(withInterruptTarget('s1', 's1#w4/item/run_n', { approved: true, item: 'run_e' })).toEqual({ approved: true, item: 'run_e' });
    expect(withInterruptTarget('s1', 's1#w4', { approved: true })).toEqual({ approved: true });
    expect(otherItemNamed('s1', 's1#w4/item/run_n', { approved: true, item: 'run_e' })).toContain('is for item "run_n"');
    expect(otherItemNamed('s1', 's1#w4/item/run_n', { approved: true, item: 'run_n' })).toBeNull();
    expect(otherItemNamed('s1', 's1#w4/item/run_n', { approved: true })).toBeNull();
    // A tool call's answer may name any call that waits (ToolCallAnswer).
    expect(otherItemNamed('s1', 's1#w2~c1', { callId: 'c2', approved: true })).toBeNull();
  });
});
