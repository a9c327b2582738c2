/**
 * `npm run bench`: the real HTTP server under load (issue 6, the last done-when item), in
 * one run of about two and a half minutes, printed as two tables.
 *
 * Processes. The server (`http-server.ts`: the real app with its log store on Redis, and
 * the bare baseline route on the same Redis) runs in a child process; this process is
 * the load: autocannon for throughput, the tail clients and the paced appender for
 * latency. So the load generator never shares the server's event loop. On a 2-core
 * machine the two processes and Redis still share the cores: the figures are for this
 * machine as a whole, and the baselines are measured the same way in the same run.
 *
 * 1. Append throughput, records/s, for one record per request and for batches of 100:
 *    the bare route (one Lua cursor mint + XADD per request; one Lua call per batch)
 *    beside `POST /sessions/{id}/events` with a real session token (auth, validation,
 *    the write filter, idempotency, canonical JSON, the request log). Targets: ≥ 0.7 of
 *    the bare route for one record, ≥ 0.5 for batches of 100.
 * 2. Append-to-delivery latency over WebSocket and NDJSON: 100 tails at 1,000 records/s
 *    (target p99 < 10 ms) and 1,000 tails at 100 records/s (target p99 < 30 ms), each
 *    with every tail on its own session and with every tail on one session, after two
 *    unmeasured runs per transport (the steady state, not a cold start).
 *
 * Sessions are opened through `POST /sessions` with an install key. REDIS_URL and
 * DATABASE_URL pick the servers (defaults: local Redis, SQLite in a temp folder).
 * BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server process there, and
 * BENCH_SERVER_FLAGS adds Node flags to it (`--trace-gc`);
 * BENCH_PARTS picks parts (comma-separated): throughput (or throughput-1, throughput-100),
 * latency (or latency-websocket, latency-ndjson); both by default.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { ServerReady } from './http-server.ts';
import {
  SECONDS,
  tailLatency,
  type BenchSession,
  type LatencyRun,
  type Transport,
} from './http-tails.ts';
import { compareThroughput, CONNECTIONS, ROUND_SECONDS, ROUNDS } from './http-throughput.ts';
import { loadAverage, ms, rate, table } from './table.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'throughput,latency').split(','));
const LOADS = [
  { tails: 100, rate: 1000, target: 10 },
  { tails: 1000, rate: 100, target: 30 },
] as const;
const TRANSPORTS: readonly Transport[] = ['websocket', 'ndjson'];
/** Unmeasured latency runs per transport before the measured ones. */
const WARMUP_RUNS = 2;
const transports = TRANSPORTS.filter(
  (transport) => PARTS.has('latency') || PARTS.has(`latency-${transport}`),
);

const began = performance.now();
console.log(`load average at start: ${loadAverage()}`);

const server = fork(new URL('./http-server.ts', import.meta.url), [], {
  execArgv: [
    '--disable-warning=ExperimentalWarning',
    ...(PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`]),
    ...(process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter((flag) => flag !== ''),
  ],
});
const [ready] = (await Promise.race([
  once(server, 'message'),
  once(server, 'exit').then(() => {
    throw new Error('the bench server exited before it was ready');
  }),
])) as [ServerReady];
const base = `http://127.0.0.1:${ready.app}`;
const bareBase = `http://127.0.0.1:${ready.bare}`;

const redis = new Redis(REDIS_URL);

/** CPU time so far, in µs, of the server process (over IPC) and of Redis (INFO cpu). */
async function cpuTimes(): Promise<{ server: number; redis: number }> {
  server.send({ type: 'cpu' });
  let micros: number | undefined;
  while (micros === undefined) {
    const [message] = (await once(server, 'message')) as [{ type: string; micros?: number }];
    if (message.type === 'cpu') micros = message.micros;
  }
  const info = await redis.info('cpu');
  const seconds = (field: string) => Number(new RegExp(`${field}:([0-9.]+)`).exec(info)?.[1]);
  return { server: micros, redis: (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6 };
}

/** Opens `count` sessions through `POST /sessions`, a few at a time. */
async function openSessions(count: number): Promise<BenchSession[]> {
  const sessions: BenchSession[] = [];
  const openOne = async (i: number) => {
    const response = await fetch(`${base}/sessions?principal=bench-${i}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ready.installKey}` },
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

const throughputRows: string[][] = [];
const latencyRows: string[][] = [];
const verdict = (met: boolean) => (met ? 'met' : 'MISSED');

try {
  const sessions = await openSessions(
    2 + (transports.length > 0 ? Math.max(...LOADS.map((l) => l.tails)) : 0),
  );
  if ([...PARTS].some((part) => part.startsWith('throughput'))) {
    for (const [batch, target] of [
      [1, 0.7],
      [100, 0.5],
    ] as const) {
      if (!PARTS.has('throughput') && !PARTS.has(`throughput-${batch}`)) continue;
      const session = sessions.pop();
      if (session === undefined) throw new Error('no session left');
      const { bare, app } = await compareThroughput(
        { url: `${bareBase}/bare/${randomUUID()}`, headers: {} },
        {
          url: `${base}/sessions/${session.id}/events`,
          headers: { authorization: `Bearer ${session.token}` },
        },
        batch,
        cpuTimes,
      );
      const ratio = app.recordsPerSecond / bare.recordsPerSecond;
      throughputRows.push([
        String(batch),
        rate(bare.recordsPerSecond),
        rate(app.recordsPerSecond),
        ratio.toFixed(3),
        `>= ${target} ${verdict(ratio >= target)}`,
        `${bare.cpuPerRecord.toFixed(1)} / ${app.cpuPerRecord.toFixed(1)}`,
        `${bare.redisCpuPerRecord.toFixed(1)} / ${app.redisCpuPerRecord.toFixed(1)}`,
        `${ms(bare.latencyP99)} / ${ms(app.latencyP99)}`,
        `${bare.failures} / ${app.failures}`,
      ]);
    }
  }
  if (transports.length > 0) {
    // Unmeasured runs first, WARMUP_RUNS per transport: a fresh server's first tails and
    // paced appends run through cold code while V8 sizes its heap (scavenges of 5-15 ms
    // that promote several MB each, against 2-5 ms once settled, `--trace-gc-nvp`),
    // which no later run meets again; the table is of the steady state.
    for (let run = 0; run < WARMUP_RUNS; run++) {
      for (const transport of transports) {
        await tailLatency(base, sessions, { transport, tails: 100, rate: 1000, shared: false });
      }
    }
    for (const load of LOADS) {
      for (const shared of [false, true]) {
        for (const transport of transports) {
          const run: LatencyRun = { transport, tails: load.tails, rate: load.rate, shared };
          const latency = await tailLatency(base, sessions, run);
          latencyRows.push([
            transport,
            shared ? `1 session x ${load.tails} tails` : `${load.tails} sessions x 1 tail`,
            rate(load.rate),
            rate(shared ? load.rate * load.tails : load.rate),
            ms(latency.p50),
            ms(latency.p99),
            ms(latency.max),
            ms(latency.appendP99),
            `${latency.delivered}/${latency.expected}`,
            String(latency.failedAppends),
            ms(latency.loopP99),
            `< ${load.target} ms ${verdict(latency.p99 < load.target && latency.delivered === latency.expected)}`,
          ]);
        }
      }
    }
  }
} finally {
  server.send({ type: 'stop' });
  await once(server, 'exit');
  await redis.quit();
}

if (throughputRows.length > 0) {
  console.log(
    `\nAppend throughput: autocannon, ${CONNECTIONS} connections, one session; after a 1 s warm-up each, ${ROUNDS} turns of ${ROUND_SECONDS} s each`,
  );
  console.log(
    table(
      [
        'records/request',
        'bare rec/s',
        'app rec/s',
        'app/bare',
        'target',
        'server CPU µs/rec bare / app',
        'Redis CPU µs/rec bare / app',
        'p99 ms bare / app',
        'failures bare / app',
      ],
      throughputRows,
    ),
  );
}
if (latencyRows.length > 0) {
  console.log(
    `\nAppend-to-delivery latency, ${String(SECONDS)} s of paced appends through POST /sessions/{id}/events`,
  );
  console.log(
    table(
      [
        'transport',
        'tails',
        'rec/s',
        'deliveries/s',
        'p50 ms',
        'p99 ms',
        'max ms',
        'append p99',
        'delivered',
        'failed appends',
        'loop p99',
        'target',
      ],
      latencyRows,
    ),
  );
  console.log('deliveries/s: lines written to tails per second (every record reaches every tail');
  console.log(
    "  of its session). The issue's loads (N tails, R records/s) are the 'sessions x 1 tail'",
  );
  console.log(
    "  rows; the '1 session' rows send every record to all N tails, N x R lines/s, a hot",
  );
  console.log('  session beyond those loads, held to the same targets.');
  console.log('append p99: from sending an append to its answer');
  console.log("loop p99: this (client) process's own event-loop delay meanwhile");
}
console.log(`load average at end: ${loadAverage()}`);
console.log(`whole run: ${((performance.now() - began) / 1000).toFixed(1)} s`);
