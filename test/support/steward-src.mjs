#!/usr/bin/env node
// `steward` from the TypeScript sources (through tsx), for the CLI tests: they see the
// current src/ without a build. The published command is bin/steward.mjs (compiled dist/).
import { register } from 'tsx/esm/api';

register();
const { runAsProcess } = await import('../../src/cli/main.ts');
await runAsProcess(process.argv);
