/**
 * A real PostgreSQL server for the tests: either the one STEWARD_TEST_PG names
 * (postgres://user:password@host:port/db, a role that may CREATE DATABASE), or a throwaway
 * cluster from Debian's binaries (postgres-cluster.ts).
 *
 * Under vitest the throwaway cluster is one per run (`sharedPostgres`, through usePostgres):
 * the first test file that needs it starts it, the others wait for it, each file works in
 * databases of its own, and the run's global setup (global-setup.ts) stops it at the end. A
 * test that stops the server or changes its settings starts one of its own (`startPostgres`).
 *
 * Where neither exists: under CI=true that is a failure; elsewhere the tests say so and skip.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { until } from './cli-process.js';
import { type Cluster, findBindir, sharedClusterFile, startCluster, stopCluster, TEST_PASSWORD } from './postgres-cluster.js';

export { TEST_PASSWORD };

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
 * Starts a cluster of the caller's own (or connects to STEWARD_TEST_PG); call stop() at the
 * end. `durable`: keep fsync on (the benchmark's figures); tests turn it off for speed.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const external = process.env.STEWARD_TEST_PG;
  if (external) return serverAt(external, async () => {}, null);
  const cluster = await startCluster({ durable: options.durable === true, maxConnections: 200 });
  // A test run that ends without afterAll (a crash, Ctrl+C) still leaves no server behind.
  const stopNow = () => {
    process.off('exit', stopNow);
    stopCluster(cluster);
  };
  process.on('exit', stopNow);
  try {
    return await serverAt(cluster.adminUrl, async () => stopNow(), cluster);
  } catch (error) {
    stopNow();
    throw error;
  }
}

/**
 * The run's one cluster, written down under `runDir` (made by the run's global setup, which
 * stops the cluster in its teardown: `stopSharedPostgres`). The first caller starts it, in whichever test
 * process that is (pg_ctl detaches the server, so it outlives that process); a lock folder makes
 * the others wait for its address. stop() drops the caller's databases and leaves the server.
 */
export async function sharedPostgres(runDir: string): Promise<TestPostgres> {
  const external = process.env.STEWARD_TEST_PG;
  if (external) return serverAt(external, async () => {}, null);
  const ready = sharedClusterFile(runDir);
  const failed = join(runDir, 'postgres.failed');
  try {
    mkdirSync(join(runDir, 'postgres.lock')); // atomic: whoever creates it starts the cluster
  } catch {
    await until(() => existsSync(ready) || existsSync(failed), `${ready} (another test file is starting PostgreSQL)`, 120_000);
    if (existsSync(failed)) throw new Error(`the run's PostgreSQL cluster did not start:\n${readFileSync(failed, 'utf8')}`);
    const cluster = JSON.parse(readFileSync(ready, 'utf8')) as Cluster;
    return serverAt(cluster.adminUrl, async () => {}, cluster);
  }
  let cluster: Cluster;
  try {
    // Room for the connections of several test files at once.
    cluster = await startCluster({ durable: false, maxConnections: 400 });
  } catch (error) {
    writeFileSync(failed, String(error instanceof Error ? error.stack : error));
    throw error;
  }
  writeFileSync(`${ready}.tmp`, JSON.stringify(cluster));
  renameSync(`${ready}.tmp`, ready); // whole, or not there yet
  return serverAt(cluster.adminUrl, async () => {}, cluster);
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
        for (const name of created) {
          // A pg.Pool's end() resolves before its connections have closed: let those a test just
          // ended go, so FORCE ends only connections left open (whose clients would get a FATAL
          // "terminating connection" as an error nobody listens for).
          const connections = async () =>
            (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name])).rows[0]!.n;
          await until(async () => (await connections()) === 0, `the connections to ${name} to close`, 1_000).catch(() => {});
          await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        }
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
