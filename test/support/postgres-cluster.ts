/**
 * Throwaway PostgreSQL clusters from Debian's binaries (`pg_config --bindir`): `initdb` in a
 * temp folder, `pg_ctl start` on a free 127.0.0.1 port with the Unix socket in that folder,
 * stopped and removed at the end. As root everything runs through `runuser -u postgres`
 * (PostgreSQL refuses to run as root) and the folder is owned by postgres. No side effect on
 * import: the run's global setup imports this to stop the shared cluster, found or not.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { closedPort } from './temp.js';

export const TEST_PASSWORD = 'steward-test-secret';

/** `pg_config --bindir`, else the newest Debian server folder (/usr/lib/postgresql/N/bin). */
export function findBindir(): string | null {
  try {
    const bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (bindir && existsSync(join(bindir, 'initdb'))) return bindir;
  } catch {
    // no pg_config: look where Debian puts the server
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

/** Where a running throwaway cluster lives: enough for another process to use or stop it. */
export interface Cluster {
  dir: string;
  port: number;
  adminUrl: string;
}

/** Stops the run's cluster if a test file started one (the global setup's teardown). */
export function stopSharedPostgres(runDir: string): void {
  const ready = sharedClusterFile(runDir);
  if (existsSync(ready)) stopCluster(JSON.parse(readFileSync(ready, 'utf8')) as Cluster);
}

/** Where the run's cluster is written down (a Cluster as JSON) once it is up. */
export function sharedClusterFile(runDir: string): string {
  return join(runDir, 'postgres.json');
}

/** Runs a server binary, as postgres when this process is root. */
function runAsPostgres(command: string, args: string[], cwd: string): void {
  const bindir = findBindir()!;
  const [file, argv] = userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', join(bindir, command), ...args]] : [join(bindir, command), args];
  const result = spawnSync(file, argv, { encoding: 'utf8', cwd });
  if (result.status !== 0) throw new Error(`${command} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
}

/** Stops a cluster (immediately: nothing in it is kept) and removes its folder; no-op once done. */
export function stopCluster(cluster: Cluster): void {
  if (!existsSync(cluster.dir)) return;
  try {
    if (existsSync(join(cluster.dir, 'data', 'postmaster.pid')))
      runAsPostgres('pg_ctl', ['stop', '-D', join(cluster.dir, 'data'), '-m', 'immediate', '-w'], cluster.dir);
  } finally {
    rmSync(cluster.dir, { recursive: true, force: true });
  }
}

export async function startCluster(options: { durable: boolean; maxConnections: number }): Promise<Cluster> {
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'steward-pg-'));
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${TEST_PASSWORD}\n`);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  chmodSync(dir, 0o700);
  const run = (command: string, args: string[]) => runAsPostgres(command, args, dir);
  try {
    // Password auth over TCP (the store's bad-credentials path is real), trust on the socket.
    run('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      `--pwfile=${pwfile}`,
      '-E',
      'UTF8',
      '--no-sync',
      '--locale=C',
    ]);
    const port = await closedPort();
    const settings = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=${options.durable ? 'on' : 'off'} -c max_connections=${options.maxConnections}`;
    run('pg_ctl', ['start', '-w', '-D', data, '-l', join(dir, 'log'), '-o', settings]);
    return { dir, port, adminUrl: `postgres://postgres:${TEST_PASSWORD}@127.0.0.1:${port}/postgres` };
  } catch (error) {
    stopCluster({ dir, port: 0, adminUrl: '' });
    throw error;
  }
}
