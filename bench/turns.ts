/**
 * `npm run bench:turns`: agent turns on the real service, each figure beside a bare
 * baseline measured in the same run on the same backend, printed as one table of ours /
 * baseline / ratio.
 *
 * Processes. The service is `node src/main.ts` in a child process (`turns-deployment.ts`:
 * its log on Redis, its control and work stores in a fresh PostgreSQL schema, keys in a
 * fresh data folder, rate limits far above loopback), started the way an operator starts
 * it; the bare route (`turns-bare.ts`) runs in a child process of its own; this process
 * is the users: it makes an install through the public flow (operator grant, inference
 * option on the `simulated` provider, proposal, consent, install key) and opens sessions
 * with it (`turns-client.ts`), and watches every turn on the principal's NDJSON tail
 * (`turns-tail.ts`). On a 2-core machine the processes, Redis and PostgreSQL share the
 * cores: the figures are for the machine as a whole, and so are the baselines.
 *
 * 1. Turns, closed loop (`turns-throughput.ts`): 100 and then 1,000 sessions, each sending a
 *    message, waiting for its `turn.ended` on its tail and sending the next, for
 *    LOOP_SECONDS after a warm-up. The figure is the records those turns landed per
 *    second (the message and the service's `turn.started`, `model.output`, `turn.ended`,
 *    as the tails saw them), with the turns/s, the send-to-`turn.ended` times and the CPU
 *    each process spent per record (/proc/<pid>/stat) beside it.
 *    Baseline: plain appends. A principal may land only `message.submitted` and
 *    `turn.cancel`, and both drive turns, so no plain append exists on the service's own
 *    route; and an install whose option cannot infer still marks, leases and parks on
 *    every append, so it is not plain either. The baseline is the bare route of
 *    `npm run bench` instead (`http-bare.ts`: Fastify and one Lua call per request that
 *    mints the cursor and XADDs the record, on the same Redis): the least an append over
 *    HTTP can do, driven by as many closed-loop writers as there are sessions, each
 *    POSTing the same one-record body and waiting for its answer. Every turn starts with
 *    such an append, so the ratio says what share of the store's plain record rate the
 *    turn machinery (work store marks and leases, the driver, its reads and appends, the
 *    tails) keeps. Target: >= 0.5.
 * 2. Latency at a steady PACED_RATE turns/s, open loop over PACED_SESSIONS sessions (each
 *    at most one turn in flight): from sending the message to its `turn.ended` seen on
 *    the tail, p50 and p99. Baseline: from sending the same message to its own record
 *    seen on the same tail, the plain append-to-delivery of the same request, at the
 *    same rate in the same run; the turn's latency cannot be below it. Target: p99 < 20 ms.
 * 3. Memory (`turns-memory.ts`), on a second deployment started for it: the service's
 *    RSS growth with MEMORY_SESSIONS sessions that each ran one turn, beside the growth
 *    with the same sessions opened before any ran a turn, both as retained after full
 *    collections (the notes give VmRSS as it stood before them). Target: < 200 MB.
 * 4. Replay (`turns-replay.ts`): a session of REPLAY_RECORDS records built over HTTP
 *    (2,500 turns), then, in this process on the same stores, `new SessionState` +
 *    `catchUp` beside the bare `log.read` of the same records, medians of REPEATS runs.
 *    Target: < 100 ms.
 *
 * The whole run takes about four minutes on a 2-core machine, two of them in
 * part 3 (10,000 session opens and 10,000 turns at the rate the service manages them).
 *
 * Each row runs on sessions of its own, so one that fails leaves the others measurable. A
 * turn that does not end within TURN_TIMEOUT_MS, a turn that ends other than `completed`,
 * a refused call, an `Err` line on a tail or a service that exits fails its row: the row
 * reads FAILED, the error is printed under the table, and the run exits 1.
 *
 * REDIS_URL and DATABASE_URL pick the servers (defaults: local Redis, the local `test`
 * database). BENCH_PARTS picks parts (comma-separated): throughput (or throughput-100,
 * throughput-1000), latency, memory, replay; all by default. BENCH_SERVER_NODE_OPTIONS
 * adds Node options to the service process only (for example `--cpu-prof
 * --cpu-prof-dir=.tmp/prof`); the service always runs with `server-probe.ts` preloaded,
 * whose event-loop and GC figures the latency rows print. BENCH_TURNS_TRACE names a file
 * each closed-loop row appends its measured turns to (session, when sent, how long), to
 * see how the latency spreads over sessions and over time.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { ProbeWindow } from './server-probe.ts';
import { TurnsClient } from './turns-client.ts';
import { cpuSeconds, Deployment } from './turns-deployment.ts';
import { pacedTurns, quantile, type PacedLatency } from './turns-load.ts';
import { memoryGrowth } from './turns-memory.ts';
import { buildSession, REPEATS, timeReplay, type Replay } from './turns-replay.ts';
import { TurnRows, verdict } from './turns-rows.ts';
import { sessionsWithTails } from './turns-tail.ts';
import { startBare, throughputRow, type Bare } from './turns-throughput.ts';
import { loadAverage, ms, rate, table } from './table.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PARTS = new Set(
  (process.env.BENCH_PARTS ?? 'throughput,latency,memory,replay').split(',').map((p) => p.trim()),
);
const LOADS = [100, 1000].filter(
  (sessions) => PARTS.has('throughput') || PARTS.has(`throughput-${sessions}`),
);
const PACED_RATE = 100;
const PACED_SECONDS = 10;
const PACED_SESSIONS = 200;
const MEMORY_SESSIONS = 10_000;
const REPLAY_RECORDS = 10_001;

const MB = 1024 * 1024;
/** Deployments not dropped yet: an interrupt drops them before the process ends. */
const live = new Set<Deployment>();
let interrupted = false;
const results = new TurnRows();

/** Part 2: two rows (p50, p99) from one paced run. */
async function latencyRows(deployment: Deployment, client: TurnsClient): Promise<void> {
  const label = `append -> turn.ended on the tail, ${PACED_RATE} turns/s`;
  /** The paced run, once for both rows (a failure fails both). */
  let paced:
    Promise<PacedLatency & { readonly busy: number; readonly server: ProbeWindow }> | undefined;
  const measure = async () => {
    const tails = await sessionsWithTails(deployment, client, PACED_SESSIONS);
    const cpuBefore = await cpuSeconds(deployment.pid);
    await deployment.probe();
    const began = performance.now();
    try {
      const latency = await pacedTurns(client, tails, PACED_RATE, PACED_SECONDS);
      const server = await deployment.probe();
      // The service's share of one core meanwhile: how near saturation the rate is.
      const cpu = (await cpuSeconds(deployment.pid)) - cpuBefore;
      return { ...latency, server, busy: cpu / ((performance.now() - began) / 1000) };
    } finally {
      for (const tail of tails) tail.close();
      deployment.check();
    }
  };
  const run = () => (paced ??= measure());
  for (const [q, target] of [
    [0.5, ''],
    [0.99, '< 20 ms'],
  ] as const) {
    await results.row(`${label}, p${q * 100}`, 'ms', target, async () => {
      const { ended, delivered, sent, loopP99, busy, server } = await run();
      const ours = quantile(ended, q);
      const base = quantile(delivered, q);
      return [
        ms(ours),
        ms(base),
        (ours / base).toFixed(2),
        target === '' ? '' : `${target} ${verdict(ours < 20)}`,
        `${ended.length}/${sent} turns measured, max ${ms(quantile(ended, 1))} ms; ` +
          `service CPU ${(busy * 100).toFixed(0)}% of a core, loop p99 ${ms(server.loopP99)}, ` +
          `max ${ms(server.loopMax)} ms, ${server.gcCount} GCs, longest ${ms(server.gcMaxMs)} ms; ` +
          `client loop p99 ${ms(loopP99)} ms`,
      ];
    });
  }
}

/** Part 4: builds the session on the running service, stops it, and times the rebuilds. */
async function replayRow(deployment: Deployment, client: TurnsClient): Promise<void> {
  let replay: Replay | undefined;
  await results.row(
    `rebuild a session of ${rate(REPLAY_RECORDS)} records (saved state + replay)`,
    'ms',
    '< 100 ms',
    async () => {
      const built = await buildSession(client, REPLAY_RECORDS, (session) => {
        deployment.track([session]);
      });
      deployment.check();
      // The service is stopped first, so the rebuild shares the machine with nobody.
      await deployment.stop();
      replay = await timeReplay(deployment, built);
      return [
        ms(replay.rebuildMs),
        ms(replay.readMs),
        (replay.rebuildMs / replay.readMs).toFixed(2),
        `< 100 ms ${verdict(replay.rebuildMs < 100)}`,
        `median of ${REPEATS}; saved at ${rate(replay.savedAt)} of ${rate(built.head)}; ` +
          `runs ${replay.rebuilds.map((n) => n.toFixed(0)).join(' ')} ms; ` +
          `built from ${rate(built.turns)} turns in ${built.seconds.toFixed(1)} s`,
      ];
    },
  );
  await results.row(`the same session replayed from cursor 1`, 'ms', '', () => {
    if (replay === undefined) throw new Error('the session was not built');
    return Promise.resolve([
      ms(replay.replayMs),
      ms(replay.readMs),
      (replay.replayMs / replay.readMs).toFixed(2),
      '',
      `median of ${REPEATS}; runs ${replay.replays.map((n) => n.toFixed(0)).join(' ')} ms`,
    ]);
  });
}

/** Runs `work` on a fresh deployment, and drops the deployment after it. */
async function onDeployment(work: (deployment: Deployment) => Promise<void>): Promise<void> {
  if (interrupted) throw new Error('interrupted');
  const deployment = await Deployment.create({ redisUrl: REDIS_URL, databaseUrl: DATABASE_URL });
  live.add(deployment);
  try {
    await work(deployment);
  } finally {
    await deployment.drop();
    live.delete(deployment);
  }
}

/** Parts 1, 2 and 4 on one deployment. */
async function firstDeployment(bare: Bare | undefined, deployment: Deployment): Promise<void> {
  const base = await deployment.start();
  const client = new TurnsClient(base, deployment.operatorToken, Math.max(16, ...LOADS));
  try {
    for (const load of LOADS) {
      if (bare === undefined) throw new Error('the bare route is not running');
      await throughputRow(results, deployment, client, bare, load);
    }
    if (PARTS.has('latency')) await latencyRows(deployment, client);
    if (PARTS.has('replay')) await replayRow(deployment, client);
  } finally {
    client.close();
  }
}

/** Part 3 on a deployment of its own. */
async function memoryDeployment(deployment: Deployment): Promise<void> {
  const base = await deployment.start();
  const client = new TurnsClient(base, deployment.operatorToken, 128);
  try {
    await results.row(
      `RSS growth, ${rate(MEMORY_SESSIONS)} sessions`,
      'MB',
      '< 200 MB',
      async () => {
        const growth = await memoryGrowth(deployment, client, MEMORY_SESSIONS);
        const mb = (bytes: number) => (bytes / MB).toFixed(1);
        return [
          mb(growth.ranTurns.retained),
          mb(growth.opened.retained),
          (growth.ranTurns.retained / growth.opened.retained).toFixed(2),
          `< 200 MB ${verdict(growth.ranTurns.retained < 200 * MB)}`,
          `retained after full GC, from ${mb(growth.start.retained)} MB (heap used ` +
            `${mb(growth.start.heap)} MB, grew ${mb(growth.ranTurns.heap)} vs ` +
            `${mb(growth.opened.heap)}); VmRSS as it stood ` +
            `${mb(growth.ranTurns.standing)} vs ${mb(growth.opened.standing)}; opened in ` +
            `${growth.openSeconds.toFixed(1)} s, one turn each in ${growth.turnSeconds.toFixed(1)} s`,
        ];
      },
    );
  } finally {
    client.close();
  }
}

const began = performance.now();
console.log(`load average at start: ${loadAverage()}`);
process.once('SIGINT', () => {
  interrupted = true;
  console.error('\ninterrupted: dropping what the run made');
  void Promise.allSettled([...live].map((deployment) => deployment.drop())).then(() => {
    process.exit(130);
  });
});
const bare = LOADS.length > 0 ? await startBare(REDIS_URL) : undefined;
try {
  if (LOADS.length > 0 || PARTS.has('latency') || PARTS.has('replay')) {
    await onDeployment((deployment) => firstDeployment(bare, deployment));
  }
  if (PARTS.has('memory')) await onDeployment(memoryDeployment);
} catch (error) {
  results.failures.push(
    `the run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
} finally {
  if (bare?.child.exitCode === null) {
    bare.child.send({ type: 'stop' });
    await once(bare.child, 'exit');
  }
}

console.log(
  '\nAgent turns on Redis (log) + PostgreSQL (control, work), simulated provider, NDJSON tails',
);
console.log(
  table(['measure', 'unit', 'ours', 'baseline', 'ours/baseline', 'target', 'notes'], results.rows),
);
console.log('baseline, records rows: the bare append route (Fastify + one Lua INCRBY/XADD per');
console.log('  request, same Redis), as many closed-loop writers as sessions, one record each');
console.log('baseline, latency rows: the same message seen on the same tail (append-to-delivery)');
console.log('baseline, RSS row: the same sessions opened, before any ran a turn');
console.log('baseline, replay rows: log.read of every record in the same pages, nothing applied');
console.log(`load average at end: ${loadAverage()}`);
console.log(`whole run: ${((performance.now() - began) / 1000).toFixed(1)} s`);
if (results.failures.length > 0) {
  results.failures.forEach((failure, i) => {
    console.error(`\nerror ${i + 1}, ${failure}`);
  });
  console.error(
    `\nFAILED: ${results.failures.length} error(s); the table holds only what was measured`,
  );
  process.exitCode = 1;
}
