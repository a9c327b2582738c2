/**
 * Append-to-delivery latency for `npm run bench`: `tails` tails (all WebSocket or all
 * NDJSON) attached to sessions of a server, and an open-loop appender landing `rate`
 * records/s, paced on a 1 ms timer and never waiting for an answer before the next send
 * (a slow answer shows in the figures instead of slowing the load). The server is the
 * app (`ourPaths`: `POST /sessions/{id}/events` with the sessions' tokens, tails at
 * `GET /sessions/{id}/events`) or the bare baseline (`barePaths`, `http-bare.ts`), run
 * by the same code with the same load, layout and transport.
 *
 * Two layouts: every tail on its own session (the appender round-robins over them), and
 * every tail on one session (each record fans out to all of them). Each record's text
 * starts with its send time (`performance.now()` of this process), and each tail takes
 * the delivery time as its line arrives, so both ends read one clock; only that number is
 * parsed out of the line, to keep the client light.
 */
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { openTail, type BenchSession, type Paths, type Transport } from './http-tail-client.ts';
import { offeredBatch } from './http-throughput.ts';

export {
  barePaths,
  ourPaths,
  type BenchSession,
  type Paths,
  type Transport,
} from './http-tail-client.ts';

/**
 * Called as the measured seconds begin and once every delivery is in: the bench reads
 * the server's probe window, stage timings and CPU time over them.
 */
export interface Measured<T> {
  began(): void;
  /** `lines`: how many lines the run's tails were to receive in the measured seconds. */
  ended(lines: number): Promise<T>;
}

export interface LatencyRun {
  readonly transport: Transport;
  readonly tails: number;
  /** Records per second, over all sessions. */
  readonly rate: number;
  /** Every tail on one session (true) or each on its own (false). */
  readonly shared: boolean;
}

export interface Latency<T = undefined> {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** p99 from the append being sent to its answer. */
  readonly appendP99: number;
  readonly delivered: number;
  readonly expected: number;
  /** Appends that were not answered 200. */
  readonly failedAppends: number;
  /** This process's own event-loop delay p99 meanwhile: a stalled client, not the server. */
  readonly loopP99: number;
  /** What `Measured.ended` answered. */
  readonly server: T;
}

/**
 * Measured seconds per run: 5,000 appends at 1,000/s, so one stall of the machine (a GC
 * pause, a neighbour's burst) weighs on p99 less than in 3 s.
 */
export const SECONDS = 5;
/**
 * Appends at the run's rate before the measured seconds: each session's first append
 * reads its head once (`append.ts`), and a run's sessions must be past that, as must the
 * JIT, before latency says anything about the steady state.
 */
const WARMUP_SECONDS = 0.5;
const DRAIN_MS = 5_000;
const CONNECT_CHUNK = 100;
const PAD = 'x'.repeat(160);

const appendAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * POSTs one record to `session`, stamped with the time now, and moves its `next` on to
 * after the cursor the app answers (the bare route answers none to move it by).
 */
function appendOne(paths: Paths, session: BenchSession, key: string): Promise<boolean> {
  const body = offeredBatch(1, `${performance.now().toFixed(3)} ${PAD}`);
  return new Promise((resolve) => {
    const request = http.request(
      `${paths.base}${paths.append(session)}`,
      {
        method: 'POST',
        agent: appendAgent,
        headers: {
          authorization: `Bearer ${session.token}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode !== 200) {
            resolve(false);
            return;
          }
          const landed = JSON.parse(Buffer.concat(chunks).toString()) as unknown;
          const last = Array.isArray(landed)
            ? ((landed as { cursor: number }[]).at(-1)?.cursor ?? 0)
            : 0;
          session.next = Math.max(session.next, last + 1);
          resolve(true);
        });
      },
    );
    request.on('error', () => {
      resolve(false);
    });
    request.end(body);
  });
}

let appendKeys = 0;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs one latency measurement against `paths`; `sessions` must hold at least
 * `run.tails` sessions; `window` hears when the measured seconds begin and end.
 */
export async function tailLatency<T>(
  paths: Paths,
  sessions: readonly BenchSession[],
  run: LatencyRun,
  window: Measured<T>,
): Promise<Latency<T>> {
  const targets = run.shared ? sessions.slice(0, 1) : sessions.slice(0, run.tails);
  const samples: number[] = [];
  // Records sent before this are the warm-up's: delivered, not counted.
  let measureFrom = Number.POSITIVE_INFINITY;
  const onSent = (sent: number): void => {
    if (sent >= measureFrom) samples.push(performance.now() - sent);
  };
  const closers: (() => void)[] = [];
  for (let i = 0; i < run.tails; i += CONNECT_CHUNK) {
    const chunk = Array.from({ length: Math.min(CONNECT_CHUNK, run.tails - i) }, (_, j) => {
      const session = targets[(i + j) % targets.length];
      if (session === undefined) throw new Error('not enough sessions for the run');
      return openTail(paths, run.transport, session, onSent);
    });
    closers.push(...(await Promise.all(chunk)));
  }
  await pause(300);

  const loop = monitorEventLoopDelay({ resolution: 1 });
  const appendTimes: number[] = [];
  const appends: Promise<boolean>[] = [];
  const started = performance.now();
  let sent = 0;
  let measured = 0;
  while (performance.now() - started < (WARMUP_SECONDS + SECONDS) * 1000) {
    if (
      measureFrom === Number.POSITIVE_INFINITY &&
      performance.now() - started >= WARMUP_SECONDS * 1000
    ) {
      measureFrom = performance.now();
      loop.enable();
      window.began();
    }
    const due = Math.floor(((performance.now() - started) * run.rate) / 1000);
    for (; sent < due; sent++) {
      const session = targets[sent % targets.length];
      if (session === undefined) continue;
      const called = performance.now();
      const counted = called >= measureFrom;
      if (counted) measured += 1;
      appends.push(
        appendOne(paths, session, `lat-${++appendKeys}`).then((ok) => {
          if (counted) appendTimes.push(performance.now() - called);
          return ok;
        }),
      );
    }
    await pause(1);
  }
  const answers = await Promise.all(appends);
  const expected = measured * (run.shared ? run.tails : 1);
  const deadline = performance.now() + DRAIN_MS;
  while (samples.length < expected && performance.now() < deadline) await pause(10);
  loop.disable();
  const server = await window.ended(expected);
  for (const close of closers) close();
  // Let the server see the tails go before the next run starts.
  await pause(500);

  const sorted = samples.sort((a, b) => a - b);
  const at = (values: number[], q: number) =>
    values[Math.floor(q * (values.length - 1))] ?? Number.NaN;
  return {
    p50: at(sorted, 0.5),
    p99: at(sorted, 0.99),
    max: at(sorted, 1),
    appendP99: at(
      appendTimes.sort((a, b) => a - b),
      0.99,
    ),
    delivered: samples.length,
    expected,
    failedAppends: answers.filter((ok) => !ok).length,
    loopP99: loop.percentile(99) / 1e6,
    server,
  };
}
