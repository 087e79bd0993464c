/**
 * A real PostgreSQL server for the tests: either the one STEWARD_TEST_PG names
 * (postgres://user:password@host:port/db, a role that may CREATE DATABASE), or a throwaway
 * cluster started here from Debian's binaries (`pg_config --bindir`): `initdb` in a temp
 * folder, `pg_ctl start` on a free 127.0.0.1 port with the Unix socket in that folder,
 * stopped and removed at the end. As root everything runs through `runuser -u postgres`
 * (PostgreSQL refuses to run as root) and the folder is owned by postgres.
 *
 * Where neither exists: under CI=true that is a failure; elsewhere the tests say so and skip.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { closedPort } from './temp.js';

export const TEST_PASSWORD = 'steward-test-secret';

/** Why the PostgreSQL tests cannot run here, or null when they can. */
export const postgresUnavailable: string | null = (() => {
  if (process.env.STEWARD_TEST_PG) return null;
  const bindir = findBindir();
  if (bindir && existsSync(join(bindir, 'initdb')) && existsSync(join(bindir, 'pg_ctl'))) return null;
  const why = "PostgreSQL tests skipped: no STEWARD_TEST_PG and no server binaries (`pg_config --bindir`; install Debian's postgresql package).";
  if (process.env.CI === 'true') throw new Error(`${why} CI needs them: .ci/run installs the package.`);
  console.warn(why);
  return why;
})();

/** `pg_config --bindir`, else the newest Debian server folder (/usr/lib/postgresql/N/bin). */
function findBindir(): string | null {
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

export interface TestPostgres {
  /** URL of the maintenance database (postgres) with a password: for admin statements. */
  readonly adminUrl: string;
  /** A new, empty database; dropped by stop(). */
  createDatabase(): Promise<string>;
  /**
   * The same database through the cluster's Unix socket (no TCP stack on either side), or
   * null for a server this process did not start (STEWARD_TEST_PG).
   */
  viaSocket(url: string): string | null;
  stop(): Promise<void>;
}

/**
 * Starts (or connects to) the server; call stop() at the end of the file. `durable`: keep
 * fsync on (the benchmark's figures); tests turn it off for speed.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const external = process.env.STEWARD_TEST_PG;
  if (external) return serverAt(external, async () => {}, null);
  return startCluster(options.durable === true);
}

async function startCluster(durable: boolean): Promise<TestPostgres> {
  const bindir = findBindir()!;
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
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bindir, command), ...args]] : [join(bindir, command), args];
    const result = spawnSync(file, argv, { encoding: 'utf8', cwd: dir });
    if (result.status !== 0) throw new Error(`${command} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  };
  const port = await closedPort();
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
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=${durable ? 'on' : 'off'} -c max_connections=200`;
  run('pg_ctl', ['start', '-w', '-D', data, '-l', join(dir, 'log'), '-o', options]);
  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    try {
      run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      process.off('exit', stopNow);
    }
  };
  // A test run that ends without afterAll (a crash, Ctrl+C) still leaves no server behind.
  process.on('exit', stopNow);
  const stopCluster = async () => stopNow();
  try {
    return await serverAt(`postgres://postgres:${TEST_PASSWORD}@127.0.0.1:${port}/postgres`, stopCluster, { dir, port });
  } catch (error) {
    await stopCluster();
    throw error;
  }
}

async function serverAt(adminUrl: string, stopServer: () => Promise<void>, socket: { dir: string; port: number } | null): Promise<TestPostgres> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const created: string[] = [];
  return {
    adminUrl,
    async createDatabase() {
      const name = `steward_test_${randomBytes(5).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${name}`);
      created.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    },
    viaSocket(url) {
      if (!socket) return null;
      // The local socket trusts its user (initdb --auth-local=trust): no password.
      return `postgres://postgres@localhost${new URL(url).pathname}?host=${encodeURIComponent(socket.dir)}&port=${socket.port}`;
    },
    async stop() {
      try {
        for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
        await stopServer();
      }
    },
  };
}

/**
 * A transaction on a connection of its own that takes a lock with `lockSql` and holds it until
 * `release()` commits it and closes the connection: the statements that need that lock wait
 * (a locked table stalls a store's pool; a locked lease row, its renewals). `client` reads
 * inside the transaction. `release()` may be called more than once.
 */
export async function holdLock(url: string, lockSql: string, params: unknown[] = []): Promise<{ client: pg.Client; release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(lockSql, params);
  } catch (error) {
    await client.end();
    throw error;
  }
  let released: Promise<void> | null = null;
  const release = () =>
    (released ??= client
      .query('COMMIT')
      .then(() => undefined)
      .finally(() => client.end()));
  return { client, release };
}
