/**
 * `npm run bench:log`: appends and tails on every log store backend that answers, in one
 * run, printed as one table in which every row holds the store's figure, the same-run
 * baseline and their ratio.
 *
 * 1. Append throughput, records/s, for batches of 1 and of 100, and for one record under
 *    a fresh idempotency key as the service lands every batch: WORKERS concurrent
 *    writers, each on its own session, in ROUNDS turns of ROUND_SECONDS that alternate
 *    with the baseline's, the raw write on the same server (`log-backends.ts`): a drift
 *    of the machine's speed during the run falls on both alike. Targets: Redis batches
 *    of 100 at >= 0.5 of raw pipelined XADD; PostgreSQL one record per append at >= 0.7
 *    of a raw INSERT.
 * 2. Tail latency, append call to delivery, p99, with TAILS tails at TAIL_RATE records/s
 *    for TAIL_SECONDS: 100 sessions with one tail each, and one session with 100 tails;
 *    the baseline is the raw way from a writer to readers on the same server
 *    (`log-raw-tails.ts`), measured the same way (`log-tails.ts`). Targets: p99 < 10 ms;
 *    PostgreSQL 100 sessions x 1 tail < 15 ms. The notes give p50,
 *    max, the append p99 and this process's event-loop delay p99 and longest GC pause,
 *    ours / baseline: the stores run in this process, so those are their stalls.
 *
 * The whole run takes about a minute and a half. REDIS_URL and DATABASE_URL pick the
 * servers.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { PendingRecord } from '../src/storage/log-store.ts';
import { postgresBackend, redisBackend, sqliteBackend, type Backend } from './log-backends.ts';
import { pendingRecord, storePath, tailLatency, type Latency } from './log-tails.ts';
import { Probe } from './server-probe.ts';
import { loadAverage, ms, rate, table } from './table.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WORKERS = 8;
const ROUNDS = 3;
const ROUND_SECONDS = 0.7;
const WARMUP_SECONDS = 0.3;
const TAIL_LOAD = { rate: 1000, seconds: 3 } as const;
const TAILS = 100;

/**
 * The append rows: plain batches, which the targets are set on, and one record under a
 * fresh idempotency key, as the service lands every batch (the raw write has no key).
 */
const APPENDS = [
  { batch: 1, keyed: false },
  { batch: 100, keyed: false },
  { batch: 1, keyed: true },
] as const;

type Write = (stream: string, records: readonly PendingRecord[]) => Promise<unknown>;

/** The records one turn of writes landed, and how long the turn took. */
interface Turn {
  readonly written: number;
  readonly ms: number;
}

/** Records written by WORKERS loops of `write`, each on its own stream, for `seconds`. */
async function writeFor(batch: number, write: Write, seconds: number): Promise<Turn> {
  let written = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      const stream = `bench-${randomUUID()}`;
      while (performance.now() < deadline) {
        await write(stream, Array.from({ length: batch }, pendingRecord));
        written += batch;
      }
    }),
  );
  return { written, ms: performance.now() - started };
}

/**
 * Records/s of `ours` and of `raw`, each warmed up, then measured in ROUNDS turns that
 * alternate between the two.
 */
async function throughputs(batch: number, ours: Write, raw: Write): Promise<[number, number]> {
  await writeFor(batch, ours, WARMUP_SECONDS);
  await writeFor(batch, raw, WARMUP_SECONDS);
  const turns: { ours: Turn[]; raw: Turn[] } = { ours: [], raw: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    turns.ours.push(await writeFor(batch, ours, ROUND_SECONDS));
    turns.raw.push(await writeFor(batch, raw, ROUND_SECONDS));
  }
  return [perSecond(turns.ours), perSecond(turns.raw)];
}

/** Records/s over some turns. */
function perSecond(turns: readonly Turn[]): number {
  let written = 0;
  let ms = 0;
  for (const turn of turns) {
    written += turn.written;
    ms += turn.ms;
  }
  return written / (ms / 1000);
}

/**
 * `>= 0.7 met` or `< 15 ms MISSED`; `< 15 ms MISSED (raw too)` when the raw way's own
 * figure misses the bound as well, a machine the bound cannot be judged on.
 */
const verdict = (label: string, met: boolean, rawMet = true) =>
  `${label} ${met ? 'met' : rawMet ? 'MISSED' : 'MISSED (raw too)'}`;

/**
 * This process's collector: the stores and their baselines run here, so its longest GC
 * pause during a tail run is a stall of the store (or of the baseline) under test.
 */
const probe = new Probe();

/** `tailLatency`, with the longest GC pause of this process while it ran. */
async function tailLatencyAndGc(
  ...args: Parameters<typeof tailLatency>
): Promise<Latency & { gcMaxMs: number }> {
  probe.window();
  const latency = await tailLatency(...args);
  return { ...latency, gcMaxMs: probe.window().gcMaxMs };
}

/** Where the store and the baseline went: p50, max, the append queue, the process. */
function notes(ours: Latency & { gcMaxMs: number }, raw: Latency & { gcMaxMs: number }): string {
  const pair = (a: number, b: number) => `${ms(a)}/${ms(b)}`;
  return [
    `p50 ${pair(ours.p50, raw.p50)}`,
    `max ${pair(ours.max, raw.max)}`,
    `append p99 ${pair(ours.appendP99, raw.appendP99)}`,
    `loop p99 ${pair(ours.loopP99, raw.loopP99)}`,
    `GC max ${pair(ours.gcMaxMs, raw.gcMaxMs)}`,
    `delivered ${ours.delivered}/${ours.expected}, ${raw.delivered}/${raw.expected}`,
  ].join('; ');
}

async function measure(backend: Backend, rows: string[][]): Promise<void> {
  const store = await backend.open();
  const reader = backend.tailsElsewhere ? await backend.open() : store;
  for (const { batch, keyed } of APPENDS) {
    const [stored, raw] = await throughputs(
      batch,
      (stream, records) =>
        store.append({ stream, records, key: keyed ? randomUUID() : null, fingerprint: 'f' }),
      (stream, records) => backend.raw(stream, records),
    );
    const ratio = stored / raw;
    const floor = keyed
      ? undefined
      : backend.name === 'redis' && batch === 100
        ? 0.5
        : backend.name === 'postgres' && batch === 1
          ? 0.7
          : undefined;
    rows.push([
      backend.name,
      `append rec/s, batch ${batch}${keyed ? ', keyed' : ''}`,
      rate(stored),
      rate(raw),
      ratio.toFixed(2),
      floor === undefined ? '' : verdict(`>= ${floor}`, ratio >= floor),
      '',
    ]);
  }
  const rawTails = await backend.rawTails();
  for (const [label, streams] of [
    [`${TAILS} sessions x 1 tail`, TAILS],
    [`1 session x ${TAILS} tails`, 1],
  ] as const) {
    const shape = { streams, tails: TAILS };
    const ours = await tailLatencyAndGc(storePath(store, reader), shape, TAIL_LOAD);
    const raw = await tailLatencyAndGc(rawTails, shape, TAIL_LOAD);
    const bound = backend.name === 'postgres' && streams === TAILS ? 15 : 10;
    rows.push([
      backend.name,
      `tail p99 ms, ${label}`,
      ms(ours.p99),
      ms(raw.p99),
      (ours.p99 / raw.p99).toFixed(2),
      verdict(`< ${bound} ms`, ours.p99 < bound, raw.p99 < bound),
      notes(ours, raw),
    ]);
  }
}

const rows: string[][] = [];
const skipped: string[] = [];
const began = performance.now();
console.log(`load average at start: ${loadAverage()}`);
for (const [name, connect] of [
  ['redis', () => redisBackend(REDIS_URL)],
  ['postgres', () => postgresBackend(DATABASE_URL)],
  ['sqlite', () => sqliteBackend()],
] as const) {
  let backend: Backend;
  try {
    backend = await connect();
  } catch (error) {
    skipped.push(
      `${name}: not measured (${error instanceof Error ? error.message : String(error)})`,
    );
    continue;
  }
  try {
    await measure(backend, rows);
  } finally {
    await backend.close();
  }
}

console.log(
  `\nLog stores beside the same-run baseline: appends by ${WORKERS} writers on their own sessions, ${ROUNDS} turns of ${ROUND_SECONDS} s alternating with the baseline's;`,
);
console.log(
  `tails at ${TAIL_LOAD.rate} records/s for ${TAIL_LOAD.seconds} s, from the append call to delivery`,
);
console.log(
  table(
    ['backend', 'measure', 'ours', 'baseline', 'ratio', 'target', 'notes (ours/baseline)'],
    rows,
  ),
);
for (const line of skipped) console.log(line);
console.log('\nratio: ours / baseline; rec/s is better higher, ms lower');
console.log('baseline, appends: redis pipelined XADD, postgres multi-row INSERT, sqlite');
console.log('  multi-row INSERT in a transaction');
console.log('keyed: each append under a fresh idempotency key, as the service lands every');
console.log('  batch; the baseline keeps no key');
console.log('baseline, tails: redis XADD to one XREAD BLOCK reader; postgres INSERT, then');
console.log('  NOTIFY with the record to one LISTEN connection; sqlite INSERT in a transaction,');
console.log('  then the tails in process; each reader fans out to its tails in memory');
console.log('append p99: from the append call to its answer (the queue the tails wait behind)');
console.log("loop p99, GC max: the bench process's own event-loop delay p99 and longest GC pause");
console.log('  meanwhile; the stores run in this process, so these are their stalls too');
console.log(`load average at end: ${loadAverage()}`);
console.log(`whole run: ${((performance.now() - began) / 1000).toFixed(1)} s`);
