// The session chart alone (variants/chart.mjs) from a second checkout (STEWARD_BEFORE), beside
// the `chart` row of this one: what the chart itself costs on each, in one run.
//
//   STEWARD_BEFORE=/path/to/checkout ONLY=xstate,chart,chart_before,steward,steward_before npm run bench:peers
import { resolve } from 'node:path';
import { chartOn } from './chart.mjs';
import { loadSteward } from './steward.mjs';

const dir = process.env.STEWARD_BEFORE;
if (!dir) throw new Error('chart_before needs STEWARD_BEFORE=<a Steward checkout with node_modules>');
const BEFORE_DIR = resolve(dir);
const api = await loadSteward(BEFORE_DIR);

export const create = () => chartOn(api, 'chart_before', BEFORE_DIR);
