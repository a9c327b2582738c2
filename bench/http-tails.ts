/**
 * Append-to-delivery latency for `npm run bench`: `tails` tails (all WebSocket or all
 * NDJSON) attached to sessions of the real server, and an open-loop appender landing
 * `rate` records/s through `POST /sessions/{id}/events` with the sessions' tokens, paced
 * on a 1 ms timer and never waiting for an answer before the next send (a slow answer
 * shows in the figures instead of slowing the load).
 *
 * Two layouts: every tail on its own session (the appender round-robins over them), and
 * every tail on one session (each record fans out to all of them). Each record's text
 * starts with its send time (`performance.now()` of this process), and each tail takes
 * the delivery time as its line arrives, so both ends read one clock; only that number is
 * parsed out of the line, to keep the client light.
 */
import http from 'node:http';
import net from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { offeredBatch } from './http-throughput.ts';

/** A session opened through `POST /sessions`, and the cursor its next record lands at. */
export interface BenchSession {
  readonly id: string;
  readonly token: string;
  next: number;
}

export type Transport = 'websocket' | 'ndjson';

export interface LatencyRun {
  readonly transport: Transport;
  readonly tails: number;
  /** Records per second, over all sessions. */
  readonly rate: number;
  /** Every tail on one session (true) or each on its own (false). */
  readonly shared: boolean;
}

export interface Latency {
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
const MARK = Buffer.from('"text":"');

const appendAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** The send time a delivered line carries, or NaN when it carries none (an `Err` line). */
function sentAt(line: Buffer): number {
  const at = line.indexOf(MARK);
  return at < 0 ? Number.NaN : Number.parseFloat(line.toString('latin1', at + 8, at + 32));
}

/** How many bytes at the end of `data` could begin a marker cut off by the read's end. */
function partialMark(data: Buffer): number {
  for (let k = Math.min(MARK.length - 1, data.length); k > 0; k--) {
    if (data.subarray(data.length - k).equals(MARK.subarray(0, k))) return k;
  }
  return 0;
}

/**
 * Calls `onSent` with the send time of every record in a stream of NDJSON bytes (chunked
 * or not): each record's text starts with its send time and a space, so the client
 * scans for that instead of parsing lines. A marker or time cut off at the end of a read
 * is kept for the next one.
 */
function sendTimes(onSent: (sent: number) => void): (data: Buffer) => void {
  let rest: Buffer = Buffer.alloc(0);
  return (chunk) => {
    const data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    let at = data.indexOf(MARK);
    let from = data.length - partialMark(data);
    while (at >= 0) {
      const end = data.indexOf(0x20, at + MARK.length);
      if (end < 0) {
        from = at;
        break;
      }
      onSent(Number.parseFloat(data.toString('latin1', at + MARK.length, end)));
      at = data.indexOf(MARK, end);
    }
    rest = from >= data.length ? Buffer.alloc(0) : data.subarray(from);
  };
}

/**
 * Opens one tail; `onSent` hears the send time of every record delivered; resolves with a
 * closer once attached. The NDJSON tail is read from a plain TCP connection: the request
 * is written by hand and the answer checked for 200, and then its bytes are scanned
 * (`sendTimes`), so the client's share of the machine goes to reading, not to an HTTP
 * parser's event per line.
 */
function openTail(
  base: string,
  transport: Transport,
  session: BenchSession,
  onSent: (sent: number) => void,
): Promise<() => void> {
  const path = `/sessions/${session.id}/events?from=${session.next}`;
  if (transport === 'websocket') {
    // The client reads only the send time out of each message: it skips ws's UTF-8
    // check of every message, which the server's JSON text never fails.
    const socket = new WebSocket(`${base.replace('http', 'ws')}${path}`, {
      headers: { authorization: `Bearer ${session.token}` },
      perMessageDeflate: false,
      skipUTF8Validation: true,
    });
    socket.on('message', (message: Buffer) => {
      const sent = sentAt(message);
      if (!Number.isNaN(sent)) onSent(sent);
    });
    return new Promise((resolve, reject) => {
      socket.once('open', () => {
        resolve(() => {
          socket.terminate();
        });
      });
      socket.once('error', reject);
    });
  }
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    socket.on('error', reject);
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${session.token}\r\n` +
        'Connection: close\r\n\r\n',
    );
    const scan = sendTimes(onSent);
    let head: Buffer = Buffer.alloc(0);
    const onHead = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = head.toString('latin1', 0, head.indexOf('\r\n'));
      if (!status.startsWith('HTTP/1.1 200 ')) {
        reject(new Error(`tail answered ${status}`));
        socket.destroy();
        return;
      }
      socket.off('data', onHead);
      socket.on('data', scan);
      scan(head.subarray(end + 4));
      resolve(() => socket.destroy());
    };
    socket.on('data', onHead);
  });
}

/** POSTs one record to `session`, stamped with the time now, and moves its `next` on. */
function appendOne(base: string, session: BenchSession, key: string): Promise<boolean> {
  const body = offeredBatch(1, `${performance.now().toFixed(3)} ${PAD}`);
  return new Promise((resolve) => {
    const request = http.request(
      `${base}/sessions/${session.id}/events`,
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
          const landed = JSON.parse(Buffer.concat(chunks).toString()) as { cursor: number }[];
          const last = landed.at(-1)?.cursor ?? 0;
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

/** Runs one latency measurement; `sessions` must hold at least `run.tails` sessions. */
export async function tailLatency(
  base: string,
  sessions: readonly BenchSession[],
  run: LatencyRun,
): Promise<Latency> {
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
      return openTail(base, run.transport, session, onSent);
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
    }
    const due = Math.floor(((performance.now() - started) * run.rate) / 1000);
    for (; sent < due; sent++) {
      const session = targets[sent % targets.length];
      if (session === undefined) continue;
      const called = performance.now();
      const counted = called >= measureFrom;
      if (counted) measured += 1;
      appends.push(
        appendOne(base, session, `lat-${++appendKeys}`).then((ok) => {
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
  };
}
