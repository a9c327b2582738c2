/**
 * The memory and scale part of `npm run bench`: what the embedded service holds resident,
 * each row beside a baseline measured in the same run.
 *
 * The service is `node src/main.ts` as users run it embedded: SQLite in a fresh data
 * folder, no DATABASE_URL or REDIS_URL, started through `test/support/service-process.ts`
 * once and stopped, then started again for the rows (its compile cache warm, as a
 * deployed service's is from its second start: `src/compile-cache.js`),
 * with the bench's probe preloaded (`server-probe.ts`: retained readings after full
 * collections). Its install is made through the public flow once it listens (see the last
 * row). Every reading is taken after SETTLED_MS of quiet, once V8's memory reducer has run
 * (see the idle row); the growth rows also give RSS after EARLY_MS, the burst they follow
 * still held, in their notes. RSS is VmRSS of /proc/<pid>/status.
 *
 * Rows:
 * - idle: the service's RSS once started and settled, beside a bare Fastify process
 *   (`http-idle.ts`, with the same preload) settled the same way. Settled means after
 *   V8's memory reducer has run, which `src/main.ts` arms at start: it runs about 8 s
 *   after the allocation rate falls, so every reading waits SETTLED_MS rather than
 *   EARLY_MS (3 s after the install the service still holds what its requests grew; 3 s
 *   after opening 10,000 sessions, 40 to 50 MB of pages the burst left to V8, which it
 *   hands back some seconds later: `docs/benchmarks.md`, "Memory readings"). Target
 *   < 150 MB.
 * - open 1,000 sessions: seconds to open 1,000 sessions through `POST /sessions`,
 *   PARALLEL at a time, beside 1,000 one-record appends through `POST
 *   /sessions/{id}/events` to already open sessions, as many at a time, on the same
 *   service just before: what opening costs over the service's own durable write.
 * - 10,000 sessions opened: RSS once they are open, beside the same service before them
 *   (after a warm-up of WARMUP_SESSIONS sessions, each opened, appended to and tailed).
 * - 10,000 live sessions: the same with a WebSocket tail open on each. A session actor
 *   passivates as soon as its open is committed (`session.actor.ts`, `keepMs: 0`): an
 *   open session holds no actor in memory, so "live" here is opened and followed, the
 *   most an open session holds in this process. Target < 200 MB.
 * - 10,000 sessions appended to and tailed once: retained RSS (after full collections)
 *   once each of them took one record, its tail (the live row's) received it, and every
 *   tail closed, beside the retained RSS of the service before them. The record is a
 *   principal's message (the only kind a principal lands besides `turn.cancel`), so each
 *   also runs one turn on the simulated provider: the install is made through the public
 *   flow (operator grant, inference option, proposal, consent), as a user makes it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fetched, PublicFlow } from '../test/support/flow.ts';
import { startService } from '../test/support/service-process.ts';
import { agent, openSessions, parallel, PARALLEL, Tails, appendTo } from './http-memory-client.ts';
import { ourPaths } from './http-tail-client.ts';
import { PROBE, probedEnv, probedFlags, START_PRELOADS } from './probed-service.ts';
import type { ProbeWindow } from './server-probe.ts';

/** Sessions opened for the growth rows (`memoryRows` may be given fewer, for a short run). */
export const SESSIONS = 10_000;
const TIMED = 1_000;
const WARMUP_SESSIONS = 100;
/** Quiet before the growth rows' early reading, in their notes. */
const EARLY_MS = 3_000;
/** Quiet before every row's reading: V8's memory reducer has run (see the idle row). */
const SETTLED_MS = 30_000;
const MB = 1024 * 1024;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** VmRSS of process `pid`, bytes. */
async function rss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

/** A probe window of process `pid` through its preloaded probe; `retained`: after full GCs. */
async function probeWindow(pid: number, file: string, retained: boolean): Promise<ProbeWindow> {
  await rm(file, { force: true });
  if (retained) await writeFile(`${file}.collect`, '');
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; ; waited += 10) {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as ProbeWindow;
    } catch (error) {
      if (waited > 10_000) throw new Error('the probe did not answer', { cause: error });
      await pause(10);
    }
  }
}

interface Reading {
  /** RSS after EARLY_MS of quiet. */
  readonly early: number;
  /** RSS after SETTLED_MS of quiet. */
  readonly standing: number;
  readonly retained: number;
  /** V8's heap after full collections: what is live, and what V8 holds for it. */
  readonly heapUsed: number;
  readonly heapTotal: number;
}

/** RSS early and settled, then as retained after full collections. */
async function reading(pid: number, file: string): Promise<Reading> {
  await pause(EARLY_MS);
  const early = await rss(pid);
  await pause(SETTLED_MS - EARLY_MS);
  const standing = await rss(pid);
  const { memory } = await probeWindow(pid, file, true);
  return {
    early,
    standing,
    retained: memory.rss,
    heapUsed: memory.heapUsed,
    heapTotal: memory.heapTotal,
  };
}

/** Where retained memory sits: V8's live heap and the heap V8 holds, ours/baseline. */
const heapNote = (ours: Reading, base: Reading): string =>
  `at ${EARLY_MS / 1000} s ${mb(ours.early)}/${mb(base.early)}; heap used ${mb(ours.heapUsed)}/${mb(base.heapUsed)}, held ${mb(ours.heapTotal)}/${mb(base.heapTotal)}`;

/** The bare Fastify process, listening. */
async function bareProcess(folder: string): Promise<ChildProcess> {
  const child = fork(new URL('./http-idle.ts', import.meta.url), [], {
    execArgv: ['--disable-warning=ExperimentalWarning', ...START_PRELOADS, `--import=${PROBE}`],
    env: { ...process.env, BENCH_PROBE_FILE: path.join(folder, 'bare-probe.json') },
  });
  await once(child, 'message');
  return child;
}

/** The bare Fastify process's RSS, settled; a first one run before it fills its compile cache. */
async function bareIdle(folder: string): Promise<number> {
  (await bareProcess(folder)).kill();
  const child = await bareProcess(folder);
  try {
    await pause(SETTLED_MS);
    if (child.pid === undefined) throw new Error('the bare process has no pid');
    return await rss(child.pid);
  } finally {
    child.kill();
  }
}

const mb = (bytes: number) => (bytes / MB).toFixed(1);
const verdict = (label: string, met: boolean) => `${label} ${met ? 'met' : 'MISSED'}`;

/**
 * Runs the memory part with `count` sessions (at least TIMED) for the growth rows;
 * answers its rows of the bench's table and the notes under it.
 */
export async function memoryRows(count = SESSIONS): Promise<{ rows: string[][]; notes: string[] }> {
  const total = Math.max(TIMED, count);
  const folder = await mkdtemp(path.join(tmpdir(), 'bench-memory-'));
  const probeFile = path.join(folder, 'probe.json');
  const dataDir = path.join(folder, 'data');
  try {
    const bare = await bareIdle(folder);
    const operatorToken = randomBytes(32).toString('base64url');
    // Started once before, as a deployed service is restarted: its compile cache is warm
    // (`src/compile-cache.js`), so the one measured loads no TypeScript stripper.
    const env = { DATA_DIR: dataDir, OPERATOR_TOKEN: operatorToken, ...probedEnv(probeFile) };
    // BENCH_SERVER_FLAGS reach this service too, after the start script's flags.
    const flags = probedFlags('BENCH_SERVER_FLAGS');
    await (await startService(env, undefined, flags)).stop();
    const service = await startService(env, undefined, flags);
    const install = await new PublicFlow(fetched(service.url), operatorToken).install();
    const pid = service.child.pid;
    if (pid === undefined) throw new Error('the service has no pid');
    const paths = ourPaths(service.url);
    try {
      await pause(SETTLED_MS);
      const idle = await rss(pid);

      const warm = await openSessions(paths, install.key, WARMUP_SESSIONS);
      const warmTails = await Tails.open(paths, warm);
      await warmTails.appendToEach(paths, warm);
      warmTails.close();
      let began = performance.now();
      await parallel(TIMED, (i) => appendTo(paths, warm[i % warm.length]));
      const appendSeconds = (performance.now() - began) / 1000;
      const before = await reading(pid, probeFile);

      began = performance.now();
      const sessions = await openSessions(paths, install.key, TIMED);
      const openSeconds = (performance.now() - began) / 1000;
      sessions.push(...(await openSessions(paths, install.key, total - TIMED)));
      const opened = await reading(pid, probeFile);

      const tails = await Tails.open(paths, sessions);
      const live = await reading(pid, probeFile);
      await tails.appendToEach(paths, sessions);
      tails.close();
      const after = await reading(pid, probeFile);
      if (service.child.exitCode !== null)
        throw new Error(`the service exited: ${service.stderr()}`);

      const row = (name: string, ours: number, base: number, target: string) => [
        'memory',
        name,
        mb(ours),
        mb(base),
        (ours / base).toFixed(2),
        target,
        '',
        '',
        '',
      ];
      const n = total.toLocaleString('en-US');
      return {
        rows: [
          [
            ...row('RSS MB, embedded idle', idle, bare, verdict('< 150 MB', idle < 150 * MB)),
            'baseline: bare Fastify process',
          ],
          [
            'memory',
            `s to open ${TIMED.toLocaleString('en-US')} sessions`,
            openSeconds.toFixed(2),
            appendSeconds.toFixed(2),
            (openSeconds / appendSeconds).toFixed(2),
            '',
            '',
            '',
            '',
            `baseline: ${TIMED} one-record appends; ${PARALLEL} at a time; ${(TIMED / openSeconds).toFixed(0)} opens/s`,
          ],
          [
            ...row(`RSS MB, ${n} sessions opened`, opened.standing, before.standing, ''),
            `retained ${mb(opened.retained)}/${mb(before.retained)}; ${heapNote(opened, before)}; baseline: before them`,
          ],
          [
            ...row(
              `RSS MB, ${n} live sessions (a tail each)`,
              live.standing,
              before.standing,
              total < SESSIONS
                ? 'none at this count'
                : verdict('< 200 MB', live.standing < 200 * MB),
            ),
            `retained ${mb(live.retained)}/${mb(before.retained)}; ${heapNote(live, before)}; baseline: before them`,
          ],
          [
            ...row(
              `retained RSS MB, ${n} sessions appended to and tailed once`,
              after.retained,
              before.retained,
              '',
            ),
            `standing ${mb(after.standing)}/${mb(before.standing)}; ${heapNote(after, before)}; baseline: before them`,
          ],
        ],
        notes: [
          `memory: the embedded service (node src/main.ts, SQLite); RSS as VmRSS after ${SETTLED_MS / 1000} s quiet,`,
          `  once V8 has run its memory reducer (notes: at ${EARLY_MS / 1000} s, the burst still held),`,
          '  retained after full collections; session actors passivate once opened (keepMs 0),',
          '  so a live session is one opened with a tail open on it',
        ],
      };
    } finally {
      await service.stop();
    }
  } finally {
    agent.destroy();
    await rm(folder, { recursive: true, force: true });
  }
}
