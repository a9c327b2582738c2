/**
 * Append throughput for `npm run bench`: autocannon against the bare route and the app,
 * closed-loop, with CONNECTIONS keep-alive connections. Each gets a warm-up run first so
 * both are past the JIT; then they take turns, ROUNDS short runs each, so a drift in what
 * else the machine does (two cores, shared with Redis and this process) weighs on both
 * alike. Records per second count only 2xx answers, over all of a target's rounds.
 *
 * Every request carries a unique `Idempotency-Key` (autocannon replaces `[<id>]` in the
 * request with a fresh id each time): without it a session token holds one batch per key
 * (decisions row 9), and every request after the first would be a replay or a 409. The
 * bare route ignores the header but gets it too, so the client does the same work for
 * both.
 */
import autocannon from 'autocannon';
import type { ProbeWindow } from './server-probe.ts';

/** Concurrent connections: enough to keep one server core busy through Redis round trips. */
export const CONNECTIONS = 32;
/** Measured runs per target, and seconds each. */
export const ROUNDS = 3;
export const ROUND_SECONDS = 1.5;
const WARMUP_SECONDS = 1;

const PAD = 'x'.repeat(160);

/** A body of `batch` message.submitted offers of the usual size (as `bench/log.ts`). */
export function offeredBatch(batch: number, text = PAD): string {
  return JSON.stringify(
    Array.from({ length: batch }, () => ({
      kind: { name: 'message.submitted', version: 1 },
      body: { text },
    })),
  );
}

export interface Throughput {
  readonly recordsPerSecond: number;
  readonly requestsPerSecond: number;
  /** Answers that were not 2xx, and connection errors: both must be 0 for a fair figure. */
  readonly failures: number;
  /** Answer latency p99 in ms, as autocannon measured it. */
  readonly latencyP99: number;
  /** Server CPU time per record, in µs (user + system of the server process). */
  readonly cpuPerRecord: number;
  /** Redis CPU time per record, in µs (its `used_cpu_user` + `used_cpu_sys`). */
  readonly redisCpuPerRecord: number;
  /** The server's event-loop delay p99 and longest GC pause, ms: the worst round's. */
  readonly loopP99: number;
  readonly gcMaxMs: number;
  /** Bytes the server allocated per record, and its collections' time per record in µs. */
  readonly allocatedPerRecord: number;
  readonly gcPerRecord: number;
}

/**
 * Reads CPU time so far, in µs, of the server process and of Redis, and the server's
 * probe window since the previous reading.
 */
export type CpuProbe = () => Promise<{
  readonly server: number;
  readonly redis: number;
  readonly window: ProbeWindow;
}>;

export interface Target {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

function run(target: Target, body: string, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    method: 'POST',
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    headers: {
      ...target.headers,
      'content-type': 'application/json',
      'idempotency-key': '[<id>]',
    },
    idReplacement: true,
    body,
  });
}

/** What the rounds of one target add up to. */
class Tally {
  ok = 0;
  seconds = 0;
  failures = 0;
  latencyP99 = 0;
  cpu = 0;
  redisCpu = 0;
  loopP99 = 0;
  gcMaxMs = 0;
  allocated = 0;
  gcMs = 0;

  async run(target: Target, body: string, probe: CpuProbe): Promise<void> {
    const before = await probe();
    const result = await run(target, body, ROUND_SECONDS);
    const after = await probe();
    this.cpu += after.server - before.server;
    this.redisCpu += after.redis - before.redis;
    // The window since `before`: this round alone.
    this.loopP99 = Math.max(this.loopP99, after.window.loopP99);
    this.gcMaxMs = Math.max(this.gcMaxMs, after.window.gcMaxMs);
    this.allocated += after.window.allocatedBytes;
    this.gcMs += after.window.gcTotalMs;
    this.add(result);
  }

  add(result: autocannon.Result): void {
    this.ok += result['2xx'];
    this.seconds += result.duration;
    this.failures += result.non2xx + result.errors;
    // The worst round's p99: a figure no round was worse than.
    this.latencyP99 = Math.max(this.latencyP99, result.latency.p99);
  }

  throughput(batch: number): Throughput {
    return {
      recordsPerSecond: (this.ok * batch) / this.seconds,
      requestsPerSecond: this.ok / this.seconds,
      failures: this.failures,
      latencyP99: this.latencyP99,
      cpuPerRecord: this.cpu / (this.ok * batch),
      redisCpuPerRecord: this.redisCpu / (this.ok * batch),
      loopP99: this.loopP99,
      gcMaxMs: this.gcMaxMs,
      allocatedPerRecord: this.allocated / (this.ok * batch),
      gcPerRecord: (this.gcMs * 1000) / (this.ok * batch),
    };
  }
}

/** Records/s POSTing batches of `batch` records to the bare route and to the app, in turns. */
export async function compareThroughput(
  bare: Target,
  app: Target,
  batch: number,
  probe: CpuProbe,
): Promise<{ bare: Throughput; app: Throughput }> {
  const body = offeredBatch(batch);
  await run(bare, body, WARMUP_SECONDS);
  await run(app, body, WARMUP_SECONDS);
  const tallies = { bare: new Tally(), app: new Tally() };
  for (let round = 0; round < ROUNDS; round++) {
    await tallies.bare.run(bare, body, probe);
    await tallies.app.run(app, body, probe);
  }
  return { bare: tallies.bare.throughput(batch), app: tallies.app.throughput(batch) };
}
