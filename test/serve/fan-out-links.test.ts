/**
 * A decision link decides a wait as a whole, and a fan-out's wait holds items each decided on
 * its own: no link is offered for one (a webhook message carries none), and asking for one
 * says where the items are decided.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { linkDecisions, whyNoLink } from '../../src/serve/link-decisions.js';
import { useTempDir } from '../support/temp.js';
import { runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';

const temp = useTempDir('steward-fan-out-links-');

describe("a fan-out's waits and decision links", () => {
  it('offers no link for its items, at the approval and at the review, and says why', async () => {
    const model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
    const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs')) }).createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes.' });
    for (const reason of ['approve_step', 'review_artifact']) {
      const view = session.view();
      expect(view.waitingReason).toBe(reason);
      expect(linkDecisions(view)).toEqual([]);
      expect(whyNoLink(view, 'alice', [])).toMatchObject({ code: 'event_refused', message: expect.stringContaining('decide the items in the app') });
      for (const item of view.team!.filter((t) => t.status === 'proposed')) await session.send({ type: 'user_approved_next_step', item: item.item });
    }
  });
});
