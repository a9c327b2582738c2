/**
 * `npm run bench:log`: appends and tails on every log store backend that answers, in one
 * run, printed as two tables (issue 3, item 7 and its done-when list).
 *
 * 1. Append throughput, records/s, for batches of 1 and of 100: WORKERS concurrent
 *    writers, each on its own session, for APPEND_SECONDS, beside the raw write on the
 *    same server (`log-backends.ts`) and their ratio. Target: Redis batches of 100 at
 *    ≥ 0.5 of raw pipelined XADD.
 * 2. Tail latency, append call to delivery, p50 / p99 / max, with 100 tails at
 *    TAIL_RATE records/s for TAIL_SECONDS: 100 sessions with one tail each, and one
 *    session with 100 tails. Appends are paced open-loop (never waiting for the previous
 *    answer), so a slow answer shows in the figures instead of slowing the load. The
 *    send time rides in the body, so a record delivered before its append answered still
 *    counts. Target: p99 < 10 ms.
 *
 * The whole run takes about a minute. REDIS_URL and DATABASE_URL pick the servers.
 */
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { LogStore, PendingRecord } from '../src/storage/log-store.ts';
import { postgresBackend, redisBackend, sqliteBackend, type Backend } from './log-backends.ts';
import { loadAverage, ms, rate, table } from './table.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WORKERS = 8;
const APPEND_SECONDS = 2;
const WARMUP_SECONDS = 0.3;
const TAIL_RATE = 1000;
const TAIL_SECONDS = 3;
const TAILS = 100;

const PAD = 'x'.repeat(160);

/** A record of the usual size whose body starts with its send time: `{"t":<ms>,…`. */
function pendingRecord(): PendingRecord {
  return {
    kind: { name: 'message.submitted', version: 1 },
    producer: 'principal:bench',
    to: null,
    idem: null,
    body: `{"t":${performance.now()},"text":"${PAD}"}`,
  };
}

const sentAt = (body: string) => Number(body.slice(5, body.indexOf(',')));

/** Records/s of `write` run by WORKERS loops, each on its own stream. */
async function throughput(
  batch: number,
  write: (stream: string, records: readonly PendingRecord[]) => Promise<unknown>,
): Promise<number> {
  const run = async (seconds: number) => {
    let written = 0;
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        const stream = `bench-${randomUUID()}`;
        while (performance.now() < deadline) {
          await write(stream, Array.from({ length: batch }, pendingRecord));
          written += batch;
        }
      }),
    );
    return written / ((performance.now() - started) / 1000);
  };
  await run(WARMUP_SECONDS);
  return run(APPEND_SECONDS);
}

interface Latency {
  /** The bench process's own event-loop delay p99 meanwhile: a stalled process, not the store. */
  readonly loopP99: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** p99 from the append call to its answer: the append queue the tails wait behind. */
  readonly appendP99: number;
  /** p99 from the append's answer to delivery (0 when delivered first): the tail path alone. */
  readonly answeredP99: number;
  readonly delivered: number;
  readonly expected: number;
}

/** Append-to-delivery latency of TAILS tails over `streams` sessions at TAIL_RATE. */
async function tailLatency(writer: LogStore, reader: LogStore, streams: number): Promise<Latency> {
  const names = Array.from({ length: streams }, () => `bench-${randomUUID()}`);
  const abort = new AbortController();
  const samples: number[] = [];
  /** Per stream, by cursor: when the append answered, and every delivery time. */
  const answered = names.map((): number[] => []);
  const deliveries = names.map((): number[][] => []);
  const appendTimes: number[] = [];
  const tails = Array.from({ length: TAILS }, async (_, i) => {
    const stream = names[i % streams] ?? '';
    for await (const record of reader.tail(stream, { from: 1, signal: abort.signal })) {
      const now = performance.now();
      samples.push(now - sentAt(record.body));
      const byCursor = deliveries[i % streams];
      if (byCursor !== undefined) (byCursor[record.envelope.cursor] ??= []).push(now);
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const appends: Promise<unknown>[] = [];
  const started = performance.now();
  let sent = 0;
  while (performance.now() - started < TAIL_SECONDS * 1000) {
    const due = Math.floor(((performance.now() - started) * TAIL_RATE) / 1000);
    for (; sent < due; sent++) {
      const index = sent % streams;
      const stream = names[index] ?? '';
      const called = performance.now();
      appends.push(
        writer
          .append({ stream, records: [pendingRecord()], key: null, fingerprint: '' })
          .then(({ records }) => {
            const now = performance.now();
            appendTimes.push(now - called);
            const answers = answered[index];
            for (const r of records) if (answers) answers[r.envelope.cursor] = now;
          }),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(appends);
  const expected = sent * (TAILS / streams);
  const deadline = performance.now() + 5000;
  while (samples.length < expected && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  loop.disable();
  abort.abort();
  await Promise.all(tails);
  const sorted = samples.sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.floor(q * (sorted.length - 1))] ?? Number.NaN;
  const loopP99 = loop.percentile(99) / 1e6;
  const afterAnswer = deliveries
    .flatMap((byCursor, index) =>
      byCursor.flatMap((times, cursor) =>
        times.map((time) => Math.max(0, time - (answered[index]?.[cursor] ?? time))),
      ),
    )
    .sort((a, b) => a - b);
  const p99Of = (values: number[]) => values[Math.floor(0.99 * (values.length - 1))] ?? Number.NaN;
  return {
    loopP99,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
    appendP99: p99Of(appendTimes.sort((a, b) => a - b)),
    answeredP99: p99Of(afterAnswer),
    delivered: samples.length,
    expected,
  };
}

async function measure(backend: Backend, appendRows: string[][], tailRows: string[][]) {
  const store = await backend.open();
  const reader = backend.tailsElsewhere ? await backend.open() : store;
  for (const batch of [1, 100]) {
    const stored = await throughput(batch, (stream, records) =>
      store.append({ stream, records, key: null, fingerprint: '' }),
    );
    const raw = await throughput(batch, (stream, records) => backend.raw(stream, records));
    const target = backend.name === 'redis' && batch === 100 ? 0.5 : undefined;
    const ratio = stored / raw;
    appendRows.push([
      backend.name,
      String(batch),
      rate(stored),
      rate(raw),
      ratio.toFixed(2),
      target === undefined ? '' : `>= ${target} ${ratio >= target ? 'met' : 'MISSED'}`,
    ]);
  }
  for (const [label, streams] of [
    [`${TAILS} sessions x 1 tail`, TAILS],
    [`1 session x ${TAILS} tails`, 1],
  ] as const) {
    const latency = await tailLatency(store, reader, streams);
    tailRows.push([
      backend.name,
      label,
      ms(latency.p50),
      ms(latency.p99),
      ms(latency.max),
      ms(latency.appendP99),
      ms(latency.answeredP99),
      `${latency.delivered}/${latency.expected}`,
      ms(latency.loopP99),
      `< 10 ms ${latency.p99 < 10 ? 'met' : 'MISSED'}`,
    ]);
  }
}

const appendRows: string[][] = [];
const tailRows: string[][] = [];
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
    await measure(backend, appendRows, tailRows);
  } finally {
    await backend.close();
  }
}

console.log(
  `\nAppend throughput: ${WORKERS} writers on their own sessions, ${APPEND_SECONDS} s each`,
);
console.log(
  table(['backend', 'batch', 'store rec/s', 'raw rec/s', 'store/raw', 'target'], appendRows),
);
console.log(
  `\nTail latency, append call to delivery, at ${TAIL_RATE} records/s for ${TAIL_SECONDS} s`,
);
console.log(
  table(
    [
      'backend',
      'tails',
      'p50 ms',
      'p99 ms',
      'max ms',
      'append p99',
      'p99 from answer',
      'delivered',
      'loop p99',
      'target',
    ],
    tailRows,
  ),
);
for (const line of skipped) console.log(line);
console.log(
  `\nraw: redis pipelined XADD, postgres multi-row INSERT, sqlite multi-row INSERT in a transaction`,
);
console.log('append p99: from the append call to its answer (the queue the tails wait behind)');
console.log('p99 from answer: from the append answering to delivery, the tail path without');
console.log('  the append queue (0 when the record arrived first)');
console.log("loop p99: the bench process's own event-loop delay meanwhile (stalls, not the store)");
console.log(`load average at end: ${loadAverage()}`);
console.log(`whole run: ${((performance.now() - began) / 1000).toFixed(1)} s`);
