/**
 * The load of parts 1 and 2 of `npm run bench:turns`.
 *
 * Closed-loop turns (part 1): every session sends a message, waits for its `turn.ended`
 * on its tail, and sends the next, for a warm-up and then the measured seconds; what the
 * tails saw meanwhile is the figure (records landed by turns: the message and what the
 * service lands for it). The bare baseline is the same number of closed-loop writers,
 * each POSTing the same one-record body to the bare route and waiting for its answer.
 *
 * Paced turns (part 2): an open-loop sender starts `rate` turns per second on a 1 ms
 * timer, never waiting for one to end before the next (a slow turn shows in the figures
 * instead of slowing the load), each on a session with no turn in flight. Each message
 * gives two samples from the moment it was sent: its own record seen on the tail (the
 * plain append-to-delivery) and its `turn.ended` seen there.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { messageBody, post, type TurnsClient } from './turns-client.ts';
import { within, type TurnTail } from './turns-tail.ts';

/**
 * BENCH_TURNS_TRACE: a file that each closed-loop run appends one line of JSON to: every
 * measured turn as [session index, sent (ms since the measured window began), ms to its
 * `turn.ended`], to look at how the latency spreads over sessions and over time.
 */
const TRACE_FILE = process.env.BENCH_TURNS_TRACE;

/** A turn not ended by then fails the bench. */
export const TURN_TIMEOUT_MS = 15_000;
/** Unmeasured seconds of load before each measured run. */
const WARMUP_SECONDS = 1;

/** The message every bench turn sends (the simulated provider echoes it). */
const TEXT = 'How is order A-1 doing?';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The value at quantile `q` of ascending `values` (NaN when empty). */
export function quantile(values: readonly number[], q: number): number {
  return values[Math.floor(q * (values.length - 1))] ?? Number.NaN;
}

/**
 * Waits for what `waited` resolves with, seen on `tail`; past TURN_TIMEOUT_MS throws with
 * the session's live status and the last records its tail saw.
 */
export async function awaitTurn<T>(
  client: TurnsClient,
  tail: TurnTail,
  waited: Promise<T>,
  what: string,
): Promise<T> {
  try {
    return await within(waited, TURN_TIMEOUT_MS, `${what} on ${tail.session.id}`);
  } catch (error) {
    const status = await client.status(tail.session).then(
      (answer) => JSON.stringify(answer),
      (failure: unknown) => `unreadable (${String(failure)})`,
    );
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}; last records: ${tail.recent.join(', ')}; status: ${status}`, {
      cause: error,
    });
  }
}

export interface TurnThroughput {
  readonly turnsPerSecond: number;
  readonly recordsPerSecond: number;
  /** Records per turn, as the tails saw them. */
  readonly recordsPerTurn: number;
  /** Send-to-`turn.ended` time of the measured turns, ascending, in ms. */
  readonly turnMs: readonly number[];
}

/** Runs every tail's session closed-loop for `seconds` after a warm-up. */
export async function closedLoopTurns(
  client: TurnsClient,
  tails: readonly TurnTail[],
  seconds: number,
): Promise<TurnThroughput> {
  let stopping = false;
  let measuring = false;
  let windowStart = 0;
  const turnMs: number[] = [];
  const trace: [number, number, number][] = [];
  const loop = async (tail: TurnTail, index: number): Promise<void> => {
    while (!stopping) {
      const ended = tail.next('turn.ended');
      const sent = performance.now();
      const counted = measuring;
      await client.send(tail.session, TEXT);
      const at = await awaitTurn(client, tail, ended, 'turn.ended');
      if (counted && measuring) {
        turnMs.push(at - sent);
        if (TRACE_FILE !== undefined) trace.push([index, sent - windowStart, at - sent]);
      }
    }
  };
  const loops = tails.map(loop);
  // The first failed loop ends the run at once instead of after the measured seconds.
  const failed = new Promise<never>((_, reject) => {
    for (const running of loops) running.catch(reject);
  });
  failed.catch(() => undefined);
  const seen = () => ({
    records: tails.reduce((sum, tail) => sum + tail.records, 0),
    ended: tails.reduce((sum, tail) => sum + tail.ended, 0),
  });
  let measured: { turns: number; records: number; seconds: number } | null = null;
  try {
    await Promise.race([pause(WARMUP_SECONDS * 1000), failed]);
    const before = seen();
    const started = performance.now();
    windowStart = started;
    measuring = true;
    await Promise.race([pause(seconds * 1000), failed]);
    const after = seen();
    measured = {
      turns: after.ended - before.ended,
      records: after.records - before.records,
      seconds: (performance.now() - started) / 1000,
    };
  } catch {
    // Reported below, with every other loop that failed.
  } finally {
    measuring = false;
    stopping = true;
  }
  const window =
    measured === null
      ? 'no measured window'
      : `in the measured ${measured.seconds.toFixed(1)} s the tails saw ` +
        `${(measured.records / measured.seconds).toFixed(0)} rec/s, ` +
        `${(measured.turns / measured.seconds).toFixed(1)} turns/s`;
  throwFailures(await Promise.allSettled(loops), `${tails.length} sessions`, window);
  if (TRACE_FILE !== undefined) {
    appendFileSync(TRACE_FILE, `${JSON.stringify({ sessions: tails.length, trace })}\n`);
  }
  if (measured === null) throw new Error('the run stopped without a failure');
  const { turns, records, seconds: elapsed } = measured;
  if (turns === 0) throw new Error('no turn ended in the measured seconds');
  return {
    turnsPerSecond: turns / elapsed,
    recordsPerSecond: records / elapsed,
    recordsPerTurn: records / turns,
    turnMs: turnMs.sort((a, b) => a - b),
  };
}

/**
 * Throws, naming how many of `of` (`100 sessions`) failed, when any of `results` did;
 * `context` (what was measured meanwhile) ends the message.
 */
function throwFailures(
  results: readonly PromiseSettledResult<unknown>[],
  of: string,
  context = '',
): void {
  const failures = results.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  const [first] = failures;
  if (first === undefined) return;
  const reason = first instanceof Error ? first.message : JSON.stringify(first);
  const after = context === '' ? '' : ` (${context})`;
  throw new Error(`${failures.length} of ${of} failed${after}; the first: ${reason}`, {
    cause: first,
  });
}

export interface BareThroughput {
  readonly recordsPerSecond: number;
  /** Records answered over the whole run, warm-up included. */
  readonly records: number;
}

/** Records/s of `writers` closed-loop writers on the bare route at `base`. */
export async function bareThroughput(
  base: string,
  writers: number,
  seconds: number,
): Promise<BareThroughput> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: writers });
  const body = messageBody(TEXT);
  let stopping = false;
  let answered = 0;
  const writer = async (): Promise<void> => {
    const url = `${base}/bare/${randomUUID()}`;
    while (!stopping) {
      const status = await post(agent, url, {}, body);
      if (status !== 200) throw new Error(`the bare route answered ${status}`);
      answered += 1;
    }
  };
  const writing = Promise.all(Array.from({ length: writers }, writer));
  try {
    await Promise.race([pause(WARMUP_SECONDS * 1000), writing]);
    const before = answered;
    const started = performance.now();
    await Promise.race([pause(seconds * 1000), writing]);
    const records = answered - before;
    const elapsed = (performance.now() - started) / 1000;
    stopping = true;
    await writing;
    return { recordsPerSecond: records / elapsed, records: answered };
  } finally {
    stopping = true;
    agent.destroy();
  }
}

export interface PacedLatency {
  /** Send to `turn.ended` seen, ascending, ms. */
  readonly ended: readonly number[];
  /** Send to the message's own record seen, ascending, ms. */
  readonly delivered: readonly number[];
  /** Turns sent in the measured seconds (each must have given both samples). */
  readonly sent: number;
  /** This process's event-loop delay p99 meanwhile, ms. */
  readonly loopP99: number;
}

/** Starts `rate` turns/s open-loop over the tails' sessions for `seconds` after a warm-up. */
export async function pacedTurns(
  client: TurnsClient,
  tails: readonly TurnTail[],
  rate: number,
  seconds: number,
): Promise<PacedLatency> {
  const idle = [...tails];
  const ended: number[] = [];
  const delivered: number[] = [];
  const turns: Promise<void>[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let measureFrom = Number.POSITIVE_INFINITY;
  let measured = 0;
  const turn = async (tail: TurnTail): Promise<void> => {
    const seen = tail.next('message.submitted');
    const end = tail.next('turn.ended');
    const sent = performance.now();
    const counted = sent >= measureFrom;
    if (counted) measured += 1;
    await client.send(tail.session, TEXT);
    const [seenAt, endAt] = await awaitTurn(client, tail, Promise.all([seen, end]), 'turn.ended');
    if (counted) {
      delivered.push(seenAt - sent);
      ended.push(endAt - sent);
    }
    idle.push(tail);
  };
  const started = performance.now();
  let due = 0;
  let stalled = false;
  while (performance.now() - started < (WARMUP_SECONDS + seconds) * 1000 && !stalled) {
    if (
      measureFrom === Number.POSITIVE_INFINITY &&
      performance.now() - started >= WARMUP_SECONDS * 1000
    ) {
      measureFrom = performance.now();
      loop.enable();
    }
    const target = Math.floor(((performance.now() - started) * rate) / 1000);
    for (; due < target && !stalled; due++) {
      const tail = idle.shift();
      if (tail === undefined) stalled = true;
      else turns.push(turn(tail));
    }
    await pause(1);
  }
  throwFailures(await Promise.allSettled(turns), `${turns.length} turns`);
  loop.disable();
  if (stalled) throw new Error(`all ${tails.length} sessions had a turn in flight at once`);
  return {
    ended: ended.sort((a, b) => a - b),
    delivered: delivered.sort((a, b) => a - b),
    sent: measured,
    loopP99: loop.percentile(99) / 1e6,
  };
}
