/**
 * Clients that keep working while a store fails under them, as a user
 * of the service would: appenders that send messages with an `Idempotency-Key` and try
 * again with the same key after a 503, tails that read on from their cursor whenever
 * theirs ends, and a prober of `/health/ready` and `/health/live`. Each keeps a ledger
 * the test compares with what the log serves once the store is back.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What a client waits for an answer before it counts the request as hung: the service's
 * request timeout (HTTP_REQUEST_TIMEOUT, 30 s by default). A Redis that goes silent
 * under an append answers 503 after its command timeouts, 5 to 10 s here.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** One request's outcome: its status, or 0 when no answer came (hang or cut connection). */
interface Answered {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/** Every answer the clients got, by status, and what was wrong with any of them. */
export class Answers {
  readonly byStatus = new Map<number, number>();
  /** 503s without a `Retry-After`, answers that took longer than the timeout, and the like. */
  readonly faults: string[] = [];
  /** The longest any request waited for its answer, in ms. */
  slowest = 0;
  /** Keys answered 2xx after one or more 503s for the same key. */
  retried = 0;

  count(status: number): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
  }

  /** 5xx answers other than 503. */
  get other5xx(): number {
    let sum = 0;
    for (const [status, n] of this.byStatus) if (status >= 500 && status !== 503) sum += n;
    return sum;
  }

  get unavailable(): number {
    return this.byStatus.get(503) ?? 0;
  }
}

/** Sends one request; a timeout or a failed connection is a fault, never a throw. */
export async function send(
  answers: Answers,
  url: string,
  init: RequestInit & { readonly token: string },
): Promise<Answered | null> {
  const started = Date.now();
  try {
    const response = await fetch(url, {
      ...init,
      headers: {
        ...(init.headers as Record<string, string>),
        authorization: `Bearer ${init.token}`,
      },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    answers.count(response.status);
    answers.slowest = Math.max(answers.slowest, Date.now() - started);
    if (response.status === 503 && response.headers.get('retry-after') === null) {
      answers.faults.push(`503 without Retry-After on ${url}`);
    }
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  } catch (error) {
    answers.faults.push(
      `no answer on ${url} after ${Date.now() - started} ms: ${(error as Error).message}`,
    );
    return null;
  }
}

/** A session as its principal holds it. */
export interface HeldSession {
  readonly session: string;
  readonly token: string;
}

/** Keys the appenders were answered 2xx for, with the cursor each was answered. */
export type Acknowledged = Map<string, number>;

/**
 * Appends `message.submitted` records to `held` until `stop` aborts, one at a time, each
 * under a fresh `Idempotency-Key` and carrying the key in its text. After a 503 (or no
 * answer) it waits `Retry-After` and sends the same key again, until it is answered; a
 * key is abandoned only on an answer that is neither 2xx nor 503, which `answers` shows.
 */
export async function appendUntil(
  base: string,
  held: HeldSession,
  acknowledged: Acknowledged,
  answers: Answers,
  stop: AbortSignal,
): Promise<void> {
  while (!stop.aborted) {
    const key = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const answer = await send(answers, `${base}/sessions/${held.session}/events`, {
        method: 'POST',
        token: held.token,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify([
          { kind: { name: 'message.submitted', version: 1 }, body: { text: key } },
        ]),
      });
      if (answer !== null && answer.status >= 200 && answer.status < 300) {
        acknowledged.set(key, (answer.body as { cursor: number }[])[0]?.cursor ?? 0);
        if (attempt > 1) answers.retried += 1;
        break;
      }
      if (answer !== null && answer.status !== 503) {
        answers.faults.push(`append answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        break;
      }
      const wait = Number(answer?.headers.get('retry-after') ?? '1');
      await sleep(Math.min(wait, 1) * 1000);
    }
    await sleep(25);
  }
}

/** What one follower of a session's tail saw. */
export interface TailLedger {
  /** Every cursor the tail served, in the order it served them. */
  readonly cursors: number[];
  /** How many times the tail was opened (1 + the times it read on after an end). */
  opens: number;
  /** The cursor it would read on from. */
  next: number;
}

/** Tails hold their connection for long: one each, never pooled, destroyed when done. */
const tailAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/**
 * Follows the tail of `held` from cursor 1 until `stop` aborts. Whenever the tail ends
 * (an `Err` line such as `read_failed`, the connection cut, a 503 to open it) it opens
 * it again from the cursor to read on from: the `Err` line's, else one past the last
 * record it served. With `hangUpMs` it also hangs up itself that often and reads on, as
 * a client on a flaky network does, so that some of its opens fall in the outage.
 */
export async function followTail(
  base: string,
  held: HeldSession,
  ledger: TailLedger,
  answers: Answers,
  stop: AbortSignal,
  hangUpMs?: number,
): Promise<void> {
  while (!stop.aborted) {
    ledger.opens += 1;
    const stopThis =
      hangUpMs === undefined ? stop : AbortSignal.any([stop, AbortSignal.timeout(hangUpMs)]);
    const status = await readTail(
      `${base}/sessions/${held.session}/events?from=${ledger.next}`,
      held.token,
      ledger,
      stopThis,
    );
    if (status !== null) answers.count(status);
    if (status !== null && status !== 200 && status !== 503) {
      answers.faults.push(`tail answered ${status}`);
    }
    if (status !== 200) await sleep(200);
  }
}

/**
 * One tail request: resolves when it ends (with its status; null when no answer came),
 * having noted every line in `ledger`.
 */
function readTail(
  url: string,
  token: string,
  ledger: TailLedger,
  stop: AbortSignal,
): Promise<number | null> {
  return new Promise((resolve) => {
    let status: number | null = null;
    const request = http.get(
      url,
      { headers: { authorization: `Bearer ${token}` }, agent: tailAgent },
      (response) => {
        status = response.statusCode ?? null;
        response.setEncoding('utf8');
        let pending = '';
        response.on('data', (chunk: string) => {
          if (status !== 200) return;
          pending += chunk;
          const lines = pending.split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) if (line !== '' && !note(line, ledger)) request.destroy();
        });
        response.on('close', () => {
          resolve(status);
        });
      },
    );
    request.on('error', () => {
      resolve(status);
    });
    const cancel = (): void => {
      request.destroy();
    };
    stop.addEventListener('abort', cancel, { once: true });
    request.on('close', () => {
      stop.removeEventListener('abort', cancel);
    });
  });
}

/** Notes one tail line; false once the tail has ended (an `Err` line). */
function note(line: string, ledger: TailLedger): boolean {
  const parsed = JSON.parse(line) as
    { Ok: { envelope: { cursor: number } } } | { Err: { code: string; cursor: number | null } };
  if ('Ok' in parsed) {
    ledger.cursors.push(parsed.Ok.envelope.cursor);
    ledger.next = parsed.Ok.envelope.cursor + 1;
    return true;
  }
  if (parsed.Err.cursor !== null) ledger.next = parsed.Err.cursor;
  return false;
}

/** What the health prober saw, per phase of the test. */
export type HealthLedger = Map<string, { ready: number[]; live: number[] }>;

/** Probes `/health/ready` and `/health/live` every 100 ms until `stop`, under `phase()`. */
export async function probeHealth(
  base: string,
  phase: () => string,
  ledger: HealthLedger,
  stop: AbortSignal,
): Promise<void> {
  while (!stop.aborted) {
    const at = phase();
    const [ready, live] = await Promise.all(
      ['ready', 'live'].map(async (which) => {
        try {
          const response = await fetch(`${base}/health/${which}`, {
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          await response.body?.cancel();
          return response.status;
        } catch {
          return 0;
        }
      }),
    );
    const seen = ledger.get(at) ?? { ready: [], live: [] };
    seen.ready.push(ready ?? 0);
    seen.live.push(live ?? 0);
    ledger.set(at, seen);
    await sleep(100);
  }
}

/** Tries `attempt` every 100 ms until it answers other than null; fails after `ms`. */
export async function eventually<T>(
  what: string,
  attempt: () => T | null | Promise<T | null>,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await sleep(100);
  }
}
