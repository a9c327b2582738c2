/**
 * `npm run soak`: a mixed load on one service process for a bounded time, to see whether
 * its memory and handles stay flat.
 *
 * The service is `node src/main.ts` in a child process (`turns-deployment.ts`, as
 * `npm run bench:turns` starts it), with `server-probe.ts` preloaded; each reading of the
 * probe is retained (taken after full collections), so the heap it reports is what
 * stayed alive. SOAK_BACKEND picks its stores: `embedded` (SQLite in its data
 * folder, the default), `postgres` (a fresh schema of DATABASE_URL) or `redis` (the log
 * on REDIS_URL, the rest in PostgreSQL). This process is the users (`soak-load.ts`): an
 * install made through the public flow (operator grant, inference option on the
 * `simulated` provider, proposal, consent, install key), CONVERSATIONS conversations that
 * open sessions, tail them, run turns (plain, `/fail 1`, `/slow 200` + cancel) and
 * archive them, and PASSING_TAILS workers whose tails come and go.
 *
 * For SOAK_MINUTES (default 10) the soak reads the service at the start (after a
 * warm-up of a tenth of the run, at most 30 s), the middle and the end, under load each
 * time, and once more at rest, a few seconds after the load stopped: its RSS (VmRSS),
 * heap used, open handles (`process.getActiveResourcesInfo()`) and event-loop p99 over
 * the window before the reading. It then prints the requests and errors (any 5xx is
 * one), what the service's own `GET /metrics` counted, and a verdict.
 *
 * Flat: at the end, RSS and heap used are each within 15% or 20 MB of the middle, and
 * open handles within 15% or 20 of it. The run passes when memory and handles are flat
 * and nothing failed; it exits 1 otherwise.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProbeWindow } from './server-probe.ts';
import { SoakCounts, SoakLoad } from './soak-load.ts';
import { loadAverage, ms, rate, table } from './table.ts';
import { TurnsClient } from './turns-client.ts';
import { Deployment } from './turns-deployment.ts';

const MINUTES = Number(process.env.SOAK_MINUTES ?? '10');
const BACKENDS = ['embedded', 'postgres', 'redis'] as const;
const BACKEND = process.env.SOAK_BACKEND ?? 'embedded';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CONVERSATIONS = 6;
const PASSING_TAILS = 2;
/** How long after the load stopped the rest reading is taken (turn drivers linger 2 s). */
const REST_MS = 4_000;
const MB = 1024 * 1024;
/** Flat: within this share of the middle reading, or within the absolute slack. */
const FLAT_SHARE = 0.15;
const FLAT_BYTES = 20 * MB;
const FLAT_HANDLES = 20;

if (!(MINUTES > 0)) throw new Error(`SOAK_MINUTES must be a positive number, not ${MINUTES}`);
if (!(BACKENDS as readonly string[]).includes(BACKEND)) {
  throw new Error(`SOAK_BACKEND must be one of ${BACKENDS.join(', ')}, not ${BACKEND}`);
}

/** One reading of the service. */
interface Reading {
  readonly point: string;
  readonly seconds: number;
  readonly rss: number;
  readonly window: ProbeWindow;
  readonly requests: number;
  readonly errors: number;
}

const handles = (window: ProbeWindow) =>
  Object.values(window.resources).reduce((sum, n) => sum + n, 0);

/** Whether `end` stayed within the share or the slack of `middle`. */
const flat = (middle: number, end: number, slack: number) =>
  end <= middle * (1 + FLAT_SHARE) || end - middle <= slack;

const growth = (middle: number, end: number, unit: number, name: string) =>
  `${(middle / unit).toFixed(unit === 1 ? 0 : 1)} -> ${(end / unit).toFixed(unit === 1 ? 0 : 1)}` +
  ` ${name} (${end >= middle ? '+' : ''}${(((end - middle) / middle) * 100).toFixed(1)}%)`;

/** The samples of `GET /metrics` the report quotes, as the service counted them. */
async function serviceCounts(base: string): Promise<string[]> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const wanted = [
    'agent_sessions_appends_total',
    'agent_sessions_records_appended_total',
    'agent_sessions_append_duration_seconds_count',
    'agent_sessions_turns_total',
    'agent_sessions_tails_live',
    'agent_sessions_session_states_live',
    'agent_sessions_turn_drivers_live',
    'agent_sessions_store_errors_total',
  ];
  return text
    .split('\n')
    .filter((line) =>
      wanted.some((name) => line.startsWith(`${name}{`) || line.startsWith(`${name} `)),
    )
    .filter((line) => !line.endsWith(' 0') || line.startsWith('agent_sessions_tails_live'));
}

const stores = {
  embedded: 'SQLite in the data folder',
  postgres: 'PostgreSQL (log and control)',
  redis: 'Redis Streams (log) + PostgreSQL (control)',
}[BACKEND as (typeof BACKENDS)[number]];
console.log(
  `soak: ${MINUTES} min on ${BACKEND} (${stores}), ${CONVERSATIONS} conversations, ` +
    `${PASSING_TAILS} passing tails; load average at start ${loadAverage()}`,
);
const deployment = await Deployment.create({
  databaseUrl: BACKEND === 'embedded' ? undefined : DATABASE_URL,
  redisUrl: BACKEND === 'redis' ? REDIS_URL : undefined,
  // The soak shares the machine with whatever else runs: a slow start is not a failure.
  startTimeoutMs: 120_000,
});
process.once('SIGINT', () => {
  console.error('\ninterrupted: dropping what the soak made');
  void deployment.drop().then(() => process.exit(130));
});

const counts = new SoakCounts();
const readings: Reading[] = [];
let verdictLine: string;
let failed = true;
try {
  const base = await deployment.start();
  const client = new TurnsClient(base, deployment.operatorToken, 4);
  const { key } = await client.install();
  client.close();
  const stop = new AbortController();
  const load = new SoakLoad(base, key, counts, stop.signal, (session) => {
    deployment.track([session]);
  });
  await deployment.probe();
  const began = performance.now();
  const read = async (point: string): Promise<void> => {
    const [rss, window] = [await deployment.rss(), await deployment.probe(true)];
    const seconds = (performance.now() - began) / 1000;
    readings.push({
      point,
      seconds,
      rss,
      window,
      requests: counts.requests,
      errors: counts.errors,
    });
    console.log(
      `  ${point} at ${seconds.toFixed(0)} s: RSS ${(rss / MB).toFixed(1)} MB, ` +
        `heap ${(window.memory.heapUsed / MB).toFixed(1)} MB, ${handles(window)} handles, ` +
        `loop p99 ${ms(window.loopP99)} ms, ${rate(counts.requests)} requests, ${counts.errors} errors`,
    );
  };
  const workers = [
    ...Array.from({ length: CONVERSATIONS }, (_, i) => load.conversations(i)),
    ...Array.from({ length: PASSING_TAILS }, (_, i) => load.passingTails(i)),
  ];
  const durationMs = MINUTES * 60_000;
  const at = (msFromStart: number) => sleep(Math.max(0, msFromStart - (performance.now() - began)));
  await at(Math.min(30_000, durationMs / 10));
  await read('start');
  await at(durationMs / 2);
  await read('middle');
  await at(durationMs);
  await read('end');
  stop.abort();
  await Promise.all(workers);
  deployment.check();
  await sleep(REST_MS);
  await read('rest');
  const metrics = await serviceCounts(base);

  const rows = readings.map((r) => [
    r.point,
    r.seconds.toFixed(0),
    (r.rss / MB).toFixed(1),
    (r.window.memory.heapUsed / MB).toFixed(1),
    String(handles(r.window)),
    Object.entries(r.window.resources)
      .sort(([, a], [, b]) => b - a)
      .map(([type, n]) => `${type} ${n}`)
      .join(', '),
    ms(r.window.loopP99),
    ms(r.window.loopMax),
    String(r.window.gcCount),
    rate(r.requests),
    String(r.errors),
  ]);
  console.log(
    `\n${table(
      [
        'point',
        's',
        'RSS MB',
        'heap used MB',
        'handles',
        'by type',
        'loop p99 ms',
        'loop max ms',
        'GCs',
        'requests',
        'errors',
      ],
      rows,
    )}`,
  );
  console.log(
    'loop p99/max, GCs: over the window since the reading before; memory after a full GC',
  );
  const statuses = [...counts.statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status} x ${rate(n)}`)
    .join(', ');
  const turns = [...counts.turns.entries()].map(([reason, n]) => `${reason} ${rate(n)}`).join(', ');
  console.log(
    `\nrequests: ${rate(counts.requests)} (${statuses}); 5xx: ${counts.serverErrors}; errors: ${counts.errors}`,
  );
  console.log(
    `sessions opened ${rate(counts.sessionsOpened)}, archived ${rate(counts.sessionsArchived)}; ` +
      `tails opened ${rate(counts.tailsOpened)}, records read ${rate(counts.tailRecords)}; turns ${turns}`,
  );
  console.log(`the service's GET /metrics at rest:\n  ${metrics.join('\n  ')}`);
  for (const [i, error] of counts.kept.entries()) console.error(`error ${i + 1}: ${error}`);

  const middle = readings.find((r) => r.point === 'middle');
  const end = readings.find((r) => r.point === 'end');
  if (middle === undefined || end === undefined) throw new Error('a reading is missing');
  const rssFlat = flat(middle.rss, end.rss, FLAT_BYTES);
  const heapFlat = flat(middle.window.memory.heapUsed, end.window.memory.heapUsed, FLAT_BYTES);
  const handlesFlat = flat(handles(middle.window), handles(end.window), FLAT_HANDLES);
  failed = !(rssFlat && heapFlat && handlesFlat) || counts.errors > 0 || counts.serverErrors > 0;
  verdictLine =
    `verdict: ${failed ? 'FAIL' : 'PASS'}: ` +
    `memory ${rssFlat && heapFlat ? 'flat' : 'GROWING'} (RSS ${growth(middle.rss, end.rss, MB, 'MB')}, ` +
    `heap ${growth(middle.window.memory.heapUsed, end.window.memory.heapUsed, MB, 'MB')}), ` +
    `handles ${handlesFlat ? 'flat' : 'GROWING'} (${growth(handles(middle.window), handles(end.window), 1, 'handles')}), ` +
    `${counts.errors} errors, ${counts.serverErrors} 5xx; ` +
    `flat = end within ${FLAT_SHARE * 100}% or ${FLAT_BYTES / MB} MB (${FLAT_HANDLES} handles) of middle`;
} catch (error) {
  verdictLine = `verdict: FAIL: the soak stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
} finally {
  await deployment.drop();
}
console.log(`load average at end: ${loadAverage()}`);
console.log(verdictLine);
if (failed) process.exitCode = 1;
