/**
 * The run's one Chromium, as a process of its own (started detached by shared-chromium.ts): it
 * outlives the test file that started it, and the other files connect to it. Usage:
 *   node test/support/chromium-server.mjs <ready-file> <failed-file> <launch options as JSON> <run's pid>
 * Once the browser is up, writes { wsEndpoint } to <ready-file> (whole, by a rename); if it
 * cannot start, the reason to <failed-file>. Stays until SIGTERM (the run's teardown), then
 * closes the browser and exits; also when the run's process (vitest's, which would have sent it) is
 * gone without a word, killed say. If the browser goes away by itself, so does this process
 * (nothing else keeps it), and the files that connect afterwards fail at once.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [ready, failed, options, runPid] = process.argv.slice(2);
if (!ready || !failed || !options || !(Number(runPid) > 0)) {
  console.error("usage: chromium-server.mjs <ready-file> <failed-file> <launch options as JSON> <run's pid>");
  process.exit(2);
}
const { executablePath, args } = JSON.parse(options);

// Ours rather than Playwright's (handleSIGTERM: false), which would close the browser but not
// exit; set before the launch, so a run that ends while the browser starts still closes it.
// close() resolves once the browser has exited and its temporary profile is removed.
let server;
let stopping = false;
const stop = () => server.close().finally(() => process.exit(0));
const stopNow = () => {
  stopping = true;
  if (server) stop();
};
process.on('SIGTERM', stopNow);
// Polled, not awaited: nothing tells a process that an unrelated one died.
setInterval(() => {
  try {
    process.kill(Number(runPid), 0);
  } catch {
    if (!stopping) stopNow();
  }
}, 2000).unref();

try {
  server = await chromium.launchServer({ executablePath, args, host: '127.0.0.1', handleSIGTERM: false });
} catch (error) {
  writeFileSync(failed, String(error instanceof Error ? error.stack : error));
  process.exit(1);
}
if (stopping) stop();
else {
  writeFileSync(`${ready}.tmp`, JSON.stringify({ wsEndpoint: server.wsEndpoint() }));
  renameSync(`${ready}.tmp`, ready);
}
