/**
 * `npm run bench`: the real HTTP service under load, printed as one table whose every row
 * holds our figure, a baseline measured in the same run, and their ratio, so a figure is
 * read against what the same machine does without us at that moment. A run of every part
 * takes about seven minutes on a quiet 2-core machine (latency four of them: 27 runs of
 * 5.5 s with their tails and drains), and far longer on a busy one.
 *
 * Processes. The server (`http-server.ts`: the real app with its log store on Redis, and
 * the bare baseline, `http-bare.ts`, on the same Redis) runs in a child process; this
 * process is the load: autocannon for throughput, the tail clients and the paced
 * appender for latency. So the load generator never shares the server's event loop. On
 * a 2-core machine the two processes and Redis still share the cores: the figures are
 * for this machine as a whole, and the baselines are measured the same way in the same
 * run. The memory part starts processes of its own (`http-memory.ts`).
 *
 * Parts (rows of the table, by its `part` column):
 * 1. throughput: records/s for one record per request and for batches of 100, the app's
 *    `POST /sessions/{id}/events` with a real session token (auth, validation, the write
 *    filter, idempotency, canonical JSON, the request log) against the bare route (one
 *    Lua cursor mint + XADD per request; one Lua call per batch), taking turns
 *    (`http-throughput.ts`). Targets: >= 0.75 of bare for one record, >= 0.6
 *    for batches of 100.
 * 2. latency: append-to-delivery p99 over WebSocket and NDJSON, ours then the bare
 *    broadcast under the same load (`http-latency.ts`, which lists the loads and
 *    targets). Two more tables break each latency row into stages: where its appends'
 *    time goes, and where its lines' (`http-stages.ts`).
 * 3. memory: the embedded service's RSS idle, with 10,000 sessions live and after
 *    10,000 sessions each appended to and tailed once, and the time to open 1,000
 *    sessions (`http-memory.ts`, which says what each row is compared with).
 * Beside ours and the baseline, each throughput and latency row gives the server's
 * event-loop delay p99 and longest GC pause over that run (its `Probe`,
 * `server-probe.ts`), ours / baseline, so a regression shows.
 *
 * Sessions are opened through `POST /sessions` with an install key. REDIS_URL and
 * DATABASE_URL pick the servers (defaults: local Redis, SQLite in a temp folder).
 * BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server process there, and
 * BENCH_SERVER_FLAGS adds Node flags to it and to the memory part's service, after the
 * start script's (`--trace-gc`, `--max-semi-space-size=32`); BENCH_STAGES=off leaves the
 * stage hooks out of the server. BENCH_MEMORY_SESSIONS opens fewer sessions than 10,000 in
 * the memory part (a short run; its rows then say how many). BENCH_PARTS picks parts (comma-separated): throughput
 * (or throughput-1, throughput-100), latency (or latency-websocket, latency-ndjson),
 * memory; all by default. BENCH_LOADS picks latency loads (`100x1`, `1x100`, `1000x1`,
 * `1x1000`; see `http-latency.ts`).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { BenchServer } from './http-ipc.ts';
import { LatencyPart, LOADS, pair, type LatencyRow } from './http-latency.ts';
import { memoryRows, SESSIONS } from './http-memory.ts';
import { APPEND_STAGES, DELIVERY_STAGES } from './http-stages.ts';
import { SECONDS, type BenchSession, type Transport } from './http-tails.ts';
import { compareThroughput, CONNECTIONS, ROUND_SECONDS, ROUNDS } from './http-throughput.ts';
import { flagsFrom } from './probed-service.ts';
import { loadAverage, rate, table } from './table.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'throughput,latency,memory').split(','));
const TRANSPORTS: readonly Transport[] = ['websocket', 'ndjson'];
const transports = TRANSPORTS.filter(
  (transport) => PARTS.has('latency') || PARTS.has(`latency-${transport}`),
);
const batches = ([1, 100] as const).filter(
  (batch) => PARTS.has('throughput') || PARTS.has(`throughput-${batch}`),
);
/** The throughput targets, ours / bare records/s. */
const FLOORS = { 1: 0.75, 100: 0.6 } as const;

/** Bytes as KB with one decimal. */
const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

/** One stage table: its title, a row per latency row, and the lines that name its stages. */
function stageTable(
  what: string,
  stages: readonly string[],
  rows: readonly (readonly string[])[],
  legend: readonly string[],
): void {
  console.log(`\nWhere ${what} goes, ms p50/p99, ours | bare, over the same runs`);
  console.log(
    table(
      ['row', ...stages],
      rows.map((row) => [...row]),
    ),
  );
  for (const line of legend) console.log(line);
}

const began = performance.now();
console.log(`load average at start: ${loadAverage()}`);

/** Opens `count` sessions through `POST /sessions`, a few at a time. */
async function openSessions(base: string, key: string, count: number): Promise<BenchSession[]> {
  const sessions: BenchSession[] = [];
  const openOne = async (i: number) => {
    const response = await fetch(`${base}/sessions?principal=bench-${i}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    if (response.status !== 201) {
      throw new Error(`POST /sessions answered ${response.status}: ${await response.text()}`);
    }
    const opened = (await response.json()) as { session: string; token: string };
    // session.opened holds cursor 1.
    sessions[i] = { id: opened.session, token: opened.token, next: 2 };
  };
  for (let i = 0; i < count; i += 16) {
    await Promise.all(Array.from({ length: Math.min(16, count - i) }, (_, j) => openOne(i + j)));
  }
  return sessions;
}

/** The throughput rows, one per batch size. */
async function throughputRows(server: BenchServer, sessions: BenchSession[]): Promise<string[][]> {
  const redis = new Redis(REDIS_URL);
  // CPU time so far, in µs, of the server process and of Redis (INFO cpu), and the
  // server's probe window since the previous reading.
  const probe = async () => {
    const { micros } = await server.ask('cpu');
    const { window } = await server.ask('window');
    const info = await redis.info('cpu');
    const seconds = (field: string) => Number(new RegExp(`${field}:([0-9.]+)`).exec(info)?.[1]);
    const redisMicros = (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
    return { server: micros, redis: redisMicros, window };
  };
  const rows: string[][] = [];
  try {
    for (const batch of batches) {
      const session = sessions.pop();
      if (session === undefined) throw new Error('no session left');
      const { bare, app } = await compareThroughput(
        { url: `http://127.0.0.1:${server.ready.bare}/bare/${randomUUID()}`, headers: {} },
        {
          url: `http://127.0.0.1:${server.ready.app}/sessions/${session.id}/events`,
          headers: { authorization: `Bearer ${session.token}` },
        },
        batch,
        probe,
      );
      const ratio = app.recordsPerSecond / bare.recordsPerSecond;
      const floor = FLOORS[batch];
      rows.push([
        'throughput',
        `append rec/s, ${batch} record${batch === 1 ? '' : 's'}/request`,
        rate(app.recordsPerSecond),
        rate(bare.recordsPerSecond),
        ratio.toFixed(2),
        `>= ${floor} ${ratio >= floor ? 'met' : 'MISSED'}`,
        '',
        pair(app.loopP99, bare.loopP99),
        pair(app.gcMaxMs, bare.gcMaxMs),
        [
          `server CPU µs/rec ${app.cpuPerRecord.toFixed(1)}/${bare.cpuPerRecord.toFixed(1)}`,
          `Redis CPU µs/rec ${app.redisCpuPerRecord.toFixed(1)}/${bare.redisCpuPerRecord.toFixed(1)}`,
          `server alloc KB/rec ${kb(app.allocatedPerRecord)}/${kb(bare.allocatedPerRecord)}`,
          `GC µs/rec ${app.gcPerRecord.toFixed(1)}/${bare.gcPerRecord.toFixed(1)}`,
          `answer p99 ${pair(app.latencyP99, bare.latencyP99)}`,
          `failures ${app.failures}/${bare.failures}`,
        ].join('; '),
      ]);
    }
  } finally {
    await redis.quit();
  }
  return rows;
}

const rows: string[][] = [];
const latencyRows: LatencyRow[] = [];
if (batches.length > 0 || transports.length > 0) {
  const server = await BenchServer.start([
    ...(PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`]),
    ...flagsFrom('BENCH_SERVER_FLAGS'),
  ]);
  try {
    const tails = transports.length > 0 ? Math.max(...LOADS.map((load) => load.tails)) : 0;
    const base = `http://127.0.0.1:${server.ready.app}`;
    const sessions = await openSessions(base, server.ready.installKey, batches.length + tails);
    rows.push(...(await throughputRows(server, sessions)));
    if (transports.length > 0) {
      latencyRows.push(...(await new LatencyPart(server, sessions).rows(transports)));
      rows.push(...latencyRows.map((row) => [...row.cells]));
    }
  } finally {
    await server.stop();
  }
}
const memory = PARTS.has('memory')
  ? await memoryRows(Number(process.env.BENCH_MEMORY_SESSIONS ?? SESSIONS))
  : undefined;
if (memory !== undefined) rows.push(...memory.rows);

console.log(
  `\nOurs beside the same-run baseline. throughput: autocannon, ${CONNECTIONS} connections, one session, ${ROUNDS} turns of ${ROUND_SECONDS} s each after a 1 s warm-up;`,
);
console.log(
  `latency: ${String(SECONDS)} s of paced appends, from sending an append to its line reaching a tail; memory: see below`,
);
console.log(
  table(
    [
      'part',
      'row',
      'ours',
      'baseline',
      'ratio',
      'target',
      'p50 ms ours / base',
      'server loop p99 ms ours / base',
      'server GC max ms ours / base',
      'notes (ours/baseline)',
    ],
    rows,
  ),
);
console.log('\nratio: ours / baseline; rec/s is better higher, ms and MB lower');
if (batches.length > 0) {
  console.log('baseline, throughput: the bare route (Lua mint + XADD) on the same Redis');
}
if (transports.length > 0) {
  console.log('baseline, latency: the bare route, then its line written straight to plain tails');
  console.log('  (WebSocket or chunked NDJSON) held in memory, same tails, layout and load');
  console.log("client loop p99: the load generator's own event-loop delay (a stalled client)");
}
if (batches.length > 0 || transports.length > 0) {
  console.log("server loop p99, GC max: the server process's event-loop delay p99 and longest");
  console.log('  GC pause over the run (throughput: its worst round)');
}
for (const line of memory?.notes ?? []) console.log(line);
if (latencyRows.some((row) => row.appendStages.length > 1)) {
  stageTable(
    'an append',
    APPEND_STAGES,
    latencyRows.map((row) => row.appendStages),
    [
      'parse: onRequest to preValidation (body); validate: to preHandler (schema);',
      '  checks: handler start to the store call (token, filter, due mark); store: the',
      '  log store append; handler: start to answer; reply: answer to onResponse',
    ],
  );
  stageTable(
    'a line',
    DELIVERY_STAGES,
    latencyRows.map((row) => row.lineStages),
    [
      "wake: the store's answer to its first tail's sight of the record; take: a tail",
      '  taking a record (line, bytes, frame, queued); held: queued bytes waiting for',
      "  their connection's write; write: that write's system call (per batch)",
    ],
  );
}
console.log(`load average at end: ${loadAverage()}`);
console.log(`whole run: ${((performance.now() - began) / 1000).toFixed(1)} s`);
