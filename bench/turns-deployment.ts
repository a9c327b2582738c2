/**
 * One service deployment for `npm run bench:turns` and `npm run soak`: `node src/main.ts`
 * in a child process (`test/support/service-process.ts`), its control and work stores in
 * a fresh PostgreSQL schema (named through the URL's `options=-c search_path=…`, which
 * `pg` passes to the server, so the service's own configuration needs nothing new) or,
 * without a database URL, in SQLite in its data folder, its log on Redis when a Redis URL
 * is given (else beside the control store), and its keys in a fresh data folder. The
 * bench makes the keys first (`loadKeyMaterial`, as the service then finds them), so it
 * holds the secrets key the stores seal with and the operator token it signs in with.
 *
 * `drop` stops the service if it still runs, then removes everything the deployment
 * made: the schema, the folder and the Redis keys of every session it was told of
 * (`track`); the service's log keys have no prefix of their own to sweep by.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadKeyMaterial } from '../src/auth/key-material.ts';
import { sessionKeys } from '../src/storage/redis/keys.ts';
import { startService, type ServiceProcess } from '../test/support/service-process.ts';
import { probedEnv, probedFlags } from './probed-service.ts';
import type { ProbeWindow } from './server-probe.ts';

/** The prefix `openStores` gives the Redis log store (`openRedisLogStore`'s default). */
const LOG_PREFIX = 'log:';

/**
 * CPU seconds (user + system) process `pid` has used so far: fields 14 and 15 of
 * /proc/<pid>/stat, in USER_HZ ticks, which Linux fixes at 100 for /proc.
 */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after it are plain.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface DeploymentOptions {
  /** The log's Redis; absent, the log lives in the SQL store. */
  readonly redisUrl?: string | undefined;
  /** The server's database, where the deployment works in a fresh schema; absent, SQLite. */
  readonly databaseUrl?: string | undefined;
  /** How long the service may take to answer `/health` at start (ms; 20 s by default). */
  readonly startTimeoutMs?: number | undefined;
}

export class Deployment {
  readonly dataDir: string;
  /** Where the service's probe writes its windows. */
  readonly #probeFile: string;
  /** DATABASE_URL as the service gets it: the fresh schema first on `search_path`. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  readonly operatorToken: string;
  readonly secretsKey: Buffer;
  /** The schema's admin connection, without which the deployment is on SQLite. */
  readonly #admin: pg.Client | undefined;
  readonly #schema: string;
  readonly #startTimeoutMs: number | undefined;
  readonly #sessions = new Set<string>();
  #service: ServiceProcess | undefined;
  #dropped: Promise<void> | undefined;

  private constructor(
    options: DeploymentOptions,
    admin: pg.Client | undefined,
    schema: string,
    dataDir: string,
    operatorToken: string,
    secretsKey: Buffer,
  ) {
    this.#admin = admin;
    this.#schema = schema;
    this.dataDir = dataDir;
    this.#probeFile = path.join(dataDir, 'bench-probe.json');
    this.redisUrl = options.redisUrl;
    this.#startTimeoutMs = options.startTimeoutMs;
    if (options.databaseUrl === undefined) {
      this.databaseUrl = undefined;
    } else {
      const url = new URL(options.databaseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      this.databaseUrl = url.toString();
    }
    this.operatorToken = operatorToken;
    this.secretsKey = secretsKey;
  }

  /** Makes the schema, the folder and the keys; the service is started by `start`. */
  static async create(options: DeploymentOptions): Promise<Deployment> {
    const schema = `bench_turns_${randomBytes(4).toString('hex')}`;
    let admin: pg.Client | undefined;
    if (options.databaseUrl !== undefined) {
      admin = new pg.Client({ connectionString: options.databaseUrl });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
    }
    const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-turns-'));
    const operatorToken = `op_${randomBytes(32).toString('base64url')}`;
    const keys = await loadKeyMaterial({
      dataDir,
      signingKeyPem: undefined,
      secretsKey: undefined,
      operatorToken,
    });
    return new Deployment(options, admin, schema, dataDir, operatorToken, keys.secretsKey);
  }

  /** Starts the service; resolves with its base URL once `/health` answers. */
  async start(): Promise<string> {
    this.#service = await startService(
      {
        OPERATOR_TOKEN: this.operatorToken,
        DATA_DIR: this.dataDir,
        ...(this.databaseUrl === undefined ? {} : { DATABASE_URL: this.databaseUrl }),
        ...(this.redisUrl === undefined ? {} : { REDIS_URL: this.redisUrl }),
        // Every family's limit out of reach: the bench measures turns, not refusals.
        ...probedEnv(this.#probeFile),
      },
      this.#startTimeoutMs,
      // The probe, then BENCH_SERVER_NODE_OPTIONS to look inside a run (--cpu-prof, --trace-gc).
      probedFlags('BENCH_SERVER_NODE_OPTIONS'),
    );
    return this.#service.url;
  }

  /** The service's process id; throws when it is not running. */
  get pid(): number {
    const pid = this.#service?.child.pid;
    if (pid === undefined) throw new Error('the service is not running');
    return pid;
  }

  /** The service's resident set size now, in bytes (VmRSS of /proc/<pid>/status). */
  async rss(): Promise<number> {
    const pid = this.pid;
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
    return Number(kb) * 1024;
  }

  /**
   * What the service's event loop and garbage collector did since the previous call (or
   * its start): one window of `server-probe.ts`; `retained`, its memory read after full
   * collections (what the process retains, without the garbage it has yet to collect).
   */
  async probe(retained = false): Promise<ProbeWindow> {
    await rm(this.#probeFile, { force: true });
    if (retained) await writeFile(`${this.#probeFile}.collect`, '');
    process.kill(this.pid, 'SIGUSR2');
    for (let waited = 0; ; waited += 10) {
      try {
        return JSON.parse(await readFile(this.#probeFile, 'utf8')) as ProbeWindow;
      } catch (error) {
        if (waited > 5_000) throw new Error("the service's probe did not answer", { cause: error });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }

  /** The service's memory after full collections (a retained probe window). */
  async retained(): Promise<NodeJS.MemoryUsage> {
    return (await this.probe(true)).memory;
  }

  /** Throws with the service's stderr if it exited under the bench. */
  check(): void {
    const code = this.#service?.child.exitCode;
    if (code !== null && code !== undefined) {
      throw new Error(`the service exited with ${code}: ${this.#service?.stderr() ?? ''}`);
    }
  }

  /** Remembers sessions whose Redis keys `drop` removes. */
  track(sessions: Iterable<{ readonly id: string }>): void {
    for (const session of sessions) this.#sessions.add(session.id);
  }

  /** Stops the service (SIGTERM, waiting for its exit). */
  async stop(): Promise<void> {
    const service = this.#service;
    this.#service = undefined;
    if (service?.child.exitCode === null) await service.stop();
  }

  /**
   * Stops the service and removes the schema, the folder and the tracked sessions' keys;
   * a second call (an interrupt during the first) waits for the first.
   */
  drop(): Promise<void> {
    this.#dropped ??= this.#drop();
    return this.#dropped;
  }

  async #drop(): Promise<void> {
    await this.stop();
    const redis = this.redisUrl === undefined ? undefined : new Redis(this.redisUrl);
    try {
      const ids = redis === undefined ? [] : [...this.#sessions];
      for (let i = 0; i < ids.length; i += 500) {
        const keys = ids.slice(i, i + 500).flatMap((id) => {
          const { log, meta, keys: idempotency } = sessionKeys(LOG_PREFIX, id);
          return [log, meta, idempotency];
        });
        await redis?.unlink(...keys);
      }
    } finally {
      await redis?.quit();
      await this.#admin?.query(`DROP SCHEMA ${this.#schema} CASCADE`);
      await this.#admin?.end();
      await rm(this.dataDir, { recursive: true, force: true });
    }
  }
}
