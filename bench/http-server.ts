/**
 * The server side of `npm run bench` (`bench/http.ts`), run as a child process so the
 * load generator never shares its event loop. It serves, on loopback:
 *
 * - the real app (`createApp` from `src/app.ts`) with its log store on Redis, under a
 *   fresh key prefix, and its control store in SQLite in a temp folder (or PostgreSQL in
 *   a fresh schema when DATABASE_URL is set), logging at `info` to /dev/null through the
 *   service's own logger (redaction included);
 * - the bare baseline (`http-bare.ts`: append route and broadcast tails) on its own port,
 *   on the same Redis.
 *
 * The app's rate limits count in Redis through a client like the log store's, as the
 * service does with REDIS_URL (taking counts a few at a time, `src/http/rate-leases.ts`);
 * BENCH_RATE_LIMIT_STORE=local counts them in the process instead (as without REDIS_URL),
 * to tell Redis's share apart.
 *
 * It makes one install through the public flow (`test/support/flow.ts`: propose, consent,
 * poll) in a build with no inference provider, so appends run no turns (a message's turn
 * driver finds no usable option and parks its session), and tells the parent over IPC:
 * `{ type: 'ready', app, bare, installKey }`. Then it answers, each with a message of the
 * same type (`ServerAnswer`): `cpu`, its CPU time so far in µs (and the kernel's part of
 * it); `window`, what its event loop and collector did since the previous `window` (a
 * `Probe` window, `server-probe.ts`), which the parent asks for around each measured
 * run; `stages-start` and `stages-stop`, the per-stage timings of appends between the
 * two (`http-stages.ts`; BENCH_STAGES=off leaves the stage hooks out altogether). On
 * `{ type: 'stop' }` (or when the parent goes) it closes everything, drops every key,
 * schema and folder it made, and exits, which also writes a `--cpu-prof` profile when the
 * parent asked for one.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { TAIL_LIMITS } from '../src/http/tails/limits.ts';
import { createApp } from '../src/app.ts';
import { RATE_FAMILIES, type RateLimits } from '../src/http/rate-limit.ts';
import { loadKeyMaterial } from '../src/auth/key-material.ts';
import { TokenService } from '../src/auth/tokens.ts';
import { systemClock, systemEntropy } from '../src/clock.ts';
import { batchedDestination, createLogger } from '../src/logger.ts';
import type { ControlStore } from '../src/storage/control-store.ts';
import type { WorkStore } from '../src/storage/work-store.ts';
import { openRedisLogStore } from '../src/storage/redis/store.ts';
import { openRateLimitClient } from '../src/storage/redis/open.ts';
import {
  openPostgresControlStore,
  openPostgresWorkStore,
  openSqliteControlStore,
  openSqliteWorkStore,
  SQLITE_FILE,
} from '../src/storage/sql/open.ts';
import { injected, PublicFlow } from '../test/support/flow.ts';
import { dropKeys, startBareServer } from './http-bare.ts';
import { StageTimer, type StageFigures } from './http-stages.ts';
import { Probe, type ProbeWindow } from './server-probe.ts';

/** What the parent hears once everything listens. */
export interface ServerReady {
  readonly type: 'ready';
  readonly app: number;
  readonly bare: number;
  readonly installKey: string;
}

/** What the server answers a request of the parent with (same `type`). */
export type ServerAnswer =
  | { readonly type: 'cpu'; readonly micros: number; readonly system: number }
  | { readonly type: 'window'; readonly window: ProbeWindow }
  | { readonly type: 'stages-start' }
  | { readonly type: 'stages-stop'; readonly stages: StageFigures | null };

/** Watches this process's event loop and collector from its start. */
const probe = new Probe();
const stages = process.env.BENCH_STAGES === 'off' ? undefined : new StageTimer();

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL;
const BASE_URL = 'http://127.0.0.1';
/**
 * Far above what loopback reaches: the limiter still runs on every request (its key, its
 * count), but the bench measures appends, not refusals (decisions row 86's 100/s is per
 * credential, and autocannon sends everything with one token).
 */
const RATE_LIMIT = 10_000_000;
/**
 * The tail caps (TAILS_PER_CREDENTIAL 50, TAILS_PER_SESSION 1,000) far above what the bench
 * opens, for the same reason: its '1 session x 1,000 tails' rows read one session with one
 * token, and a run's tails may still be closing when the next run opens its own. Buffers
 * and the heartbeat keep their defaults.
 */
const TAIL_CAP = 1_000_000;
const LOCAL_RATE_LIMIT = process.env.BENCH_RATE_LIMIT_STORE === 'local';

const suffix = randomBytes(4).toString('hex');
const prefix = `bench:${suffix}:`;
const cleanups: (() => Promise<unknown>)[] = [];

/** The control and work stores, in SQLite in `dataDir` or in a fresh PostgreSQL schema. */
async function sqlStores(
  dataDir: string,
  secretsKey: Buffer,
): Promise<{ readonly control: ControlStore; readonly work: WorkStore }> {
  if (DATABASE_URL === undefined) {
    const file = path.join(dataDir, SQLITE_FILE);
    const control = await openSqliteControlStore({ file, secretsKey });
    return { control, work: await openSqliteWorkStore({ file }) };
  }
  const schema = `bench_${suffix}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  cleanups.push(async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  const control = await openPostgresControlStore({ url: DATABASE_URL, schema, secretsKey });
  return { control, work: await openPostgresWorkStore({ url: DATABASE_URL, schema }) };
}

async function start(): Promise<ServerReady> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-http-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const keys = await loadKeyMaterial({
    dataDir,
    signingKeyPem: undefined,
    secretsKey: undefined,
    operatorToken: undefined,
  });
  const log = await openRedisLogStore({ url: REDIS_URL, prefix, name: 'bench' });
  const { control, work } = await sqlStores(dataDir, keys.secretsKey);
  const counting = LOCAL_RATE_LIMIT ? undefined : await openRateLimitClient(log.client);
  if (counting !== undefined) {
    cleanups.push(() => counting.quit());
  }
  const shutdown = new AbortController();
  const app = await createApp({
    baseUrl: BASE_URL,
    bodyLimit: 1024 * 1024,
    rateLimits: Object.fromEntries(
      RATE_FAMILIES.map((family) => [family, { max: RATE_LIMIT, windowMs: 1000 }]),
    ) as RateLimits,
    // As `src/main.ts` with REDIS_URL: the limits count in Redis, on a connection of their own.
    rateLimitRedis: counting,
    // As `src/main.ts` logs (`batchedDestination`), here on /dev/null so the bench prints
    // only tables.
    logger: createLogger({ level: 'info', destination: batchedDestination('/dev/null') }),
    logStore: stages?.logStore(log) ?? log,
    controlStore: control,
    workStore: work,
    turns: { leaseMs: 10_000, sweepMs: 1000, idleArchiveMs: 7 * 86_400_000 },
    tokens: new TokenService(keys.signing, BASE_URL, systemClock),
    clock: systemClock,
    entropy: systemEntropy,
    operatorTokenHash: keys.operatorTokenHash,
    consoleOidc: undefined,
    shutdown: shutdown.signal,
    sealKey: keys.secretsKey,
    // The bench measures appends: in a build with no inference provider a message's turn
    // driver parks its session instead of running a turn.
    providers: {},
    tailLimits: { ...TAIL_LIMITS, perCredential: TAIL_CAP, perSession: TAIL_CAP },
  });
  stages?.hook(app, 'ours', '/sessions/:id/events', '/sessions/:id/events');
  await app.ready();
  const bare = await startBareServer(
    REDIS_URL,
    prefix,
    stages === undefined
      ? undefined
      : {
          prepare: (bareApp) => {
            stages.hook(bareApp, 'bare', '/bare/:stream', '/bare/:stream/events');
          },
          take: (send) => stages.bareTake(send),
        },
  );
  // Last in, first out: the servers close before the stores they use.
  cleanups.push(
    () => dropKeys(REDIS_URL, prefix),
    () => control.close(),
    () => work.close(),
    () => log.close(),
  );
  cleanups.push(
    () => bare.close(),
    async () => {
      shutdown.abort();
      await app.close();
    },
  );
  const operator = keys.generatedOperatorToken;
  if (operator === undefined) throw new Error('the bench key material has no operator token');
  const install = await new PublicFlow(injected(app), operator).install();
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    type: 'ready',
    app: (app.server.address() as AddressInfo).port,
    bare: bare.port,
    installKey: install.key,
  };
}

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const cleanup of cleanups.reverse()) {
    await cleanup().catch((error: unknown) => {
      process.stderr.write(`bench server cleanup: ${String(error)}\n`);
    });
  }
  if (process.connected) process.disconnect();
  // A handle left open must not keep the process (and its profile) from ending.
  setTimeout(() => process.exit(), 2_000).unref();
}

function answer(type: string | undefined): ServerAnswer | undefined {
  switch (type) {
    case 'cpu': {
      // The parent reads this process's CPU time around each run: µs of server CPU per record.
      const { user, system } = process.cpuUsage();
      return { type, micros: user + system, system };
    }
    case 'window':
      return { type, window: probe.window() };
    case 'stages-start':
      stages?.start();
      return { type };
    case 'stages-stop':
      return { type, stages: stages?.stop() ?? null };
    default:
      return undefined;
  }
}

process.on('message', (message: { type?: string }) => {
  if (message.type === 'stop') void stop();
  const reply = answer(message.type);
  if (reply !== undefined) process.send?.(reply);
});
process.on('disconnect', () => void stop());
start().then(
  (ready) => process.send?.(ready),
  async (error: unknown) => {
    process.stderr.write(
      `bench server failed: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    await stop();
    process.exitCode = 1;
  },
);
