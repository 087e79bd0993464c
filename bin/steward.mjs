#!/usr/bin/env node
// The `steward` command. Runs the TypeScript sources through tsx, so a fresh clone works
// without a build step (tsx is a runtime dependency).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
