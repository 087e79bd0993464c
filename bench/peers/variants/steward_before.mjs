// Steward from a second checkout (STEWARD_BEFORE: e.g. the commit before a change), beside
// the `steward` row of this one, so that one table holds both and each has its ratio to
// `xstate` from the same run:
//
//   STEWARD_BEFORE=/path/to/checkout ONLY=xstate,steward,steward_before npm run bench:peers
//
// The same adapter as variants/steward.mjs, on that checkout's public API and package.
import { resolve } from 'node:path';
import { adapterOn, loadSteward } from './steward.mjs';

const dir = process.env.STEWARD_BEFORE;
if (!dir) throw new Error('steward_before needs STEWARD_BEFORE=<a Steward checkout with node_modules>');
const BEFORE_DIR = resolve(dir);
const api = await loadSteward(BEFORE_DIR);

export const create = () => adapterOn(api, 'steward_before', BEFORE_DIR);
