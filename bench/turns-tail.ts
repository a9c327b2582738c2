/**
 * A principal's NDJSON tail of one session (`GET /sessions/{id}/events?from=…`, interface
 * 4.2) as `npm run bench:turns` reads it: every line parsed, records counted, and the
 * arrival time of each `message.submitted` and `turn.ended` handed to whoever waits for
 * it, in order (a bench session has at most one message in flight, so the next one seen
 * is the one waited for). The time is taken once per read, before parsing, so the parse
 * of a chunk's lines does not count as latency.
 *
 * Loud by design: an `Err` line, a `turn.ended` whose reason is not `completed`, a line
 * that is not JSON, or a tail that ends while the bench still reads it rejects every
 * waiter, and `failure` keeps the reason for the caller to throw.
 *
 * `sessionsWithTails` opens a fresh install's sessions with a tail on each, as the load
 * parts start.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { BenchSession, TurnsClient } from './turns-client.ts';
import type { Deployment } from './turns-deployment.ts';

interface TailLine {
  readonly Ok?: {
    readonly envelope: { readonly cursor: number; readonly kind: { readonly name: string } };
    readonly body: Record<string, unknown>;
  };
  readonly Err?: unknown;
}

/** Records `recent` keeps. */
const RECENT = 6;
/** Tails `sessionsWithTails` opens at once. */
const TAIL_CHUNK = 100;

interface Waiter {
  readonly resolve: (at: number) => void;
  readonly reject: (error: Error) => void;
}

/** Rejects with a message naming `what` unless `promise` settles within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} did not happen within ${ms} ms`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
  });
}

/** One session's tail, open until `close`. */
export class TurnTail {
  readonly session: BenchSession;
  /** Records seen (every `Ok` line). */
  records = 0;
  /** `turn.ended` records seen. */
  ended = 0;
  /** The cursor of the last record seen. */
  head = 0;
  /** `<cursor> <kind>` of the last records seen, newest last: what a failure reports. */
  readonly recent: string[] = [];
  /** Why the tail stopped being trustworthy, once it did. */
  failure: Error | null = null;
  /** Who waits for the next record of a kind, in order. */
  readonly #waiters = new Map<string, Waiter[]>();
  #request: http.ClientRequest | undefined;
  #closed = false;
  #rest = '';

  private constructor(session: BenchSession) {
    this.session = session;
  }

  /** Opens the tail from cursor `from`; resolves once the service answered 200. */
  static open(base: string, session: BenchSession, from: number): Promise<TurnTail> {
    const tail = new TurnTail(session);
    return new Promise((resolve, reject) => {
      const request = http.get(
        `${base}/sessions/${session.id}/events?from=${from}`,
        { agent: false, headers: { authorization: `Bearer ${session.token}` } },
        (response) => {
          if (response.statusCode !== 200) {
            reject(new Error(`the tail of ${session.id} answered ${response.statusCode}`));
            response.resume();
            return;
          }
          // Decoded as a stream: a character split between two reads stays whole.
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            tail.#read(chunk, performance.now());
          });
          response.once('end', () => {
            tail.#fail(new Error(`the tail of ${session.id} ended`));
          });
          response.once('error', (error) => {
            tail.#fail(error);
          });
          resolve(tail);
        },
      );
      request.once('error', (error) => {
        reject(error);
        tail.#fail(error);
      });
      tail.#request = request;
    });
  }

  /**
   * Resolves with the arrival time of the next record of `kind` (a `turn.ended` must be
   * `completed`). A record nobody waits for is only counted.
   */
  next(kind: string): Promise<number> {
    const waited =
      this.failure === null
        ? new Promise<number>((resolve, reject) => {
            const queue = this.#waiters.get(kind) ?? [];
            queue.push({ resolve, reject });
            this.#waiters.set(kind, queue);
          })
        : Promise.reject(this.failure);
    // Marked handled: a waiter whose send failed is dropped, and the send's error is the
    // one thrown; whoever awaits it still gets the rejection.
    waited.catch(() => undefined);
    return waited;
  }

  /** Ends the tail; waiters still pending are rejected. */
  close(): void {
    this.#fail(new Error(`the tail of ${this.session.id} was closed`));
    this.#closed = true;
    this.#request?.destroy();
  }

  #read(chunk: string, at: number): void {
    const text = this.#rest + chunk;
    const lines = text.split('\n');
    this.#rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line !== '') this.#line(line, at);
    }
  }

  #line(text: string, at: number): void {
    let line: TailLine;
    try {
      line = JSON.parse(text) as TailLine;
    } catch {
      this.#fail(new Error(`the tail of ${this.session.id} sent a line that is not JSON`));
      return;
    }
    const record = line.Ok;
    if (record === undefined) {
      this.#fail(new Error(`the tail of ${this.session.id} sent ${text}`));
      return;
    }
    this.records += 1;
    this.head = record.envelope.cursor;
    const kind = record.envelope.kind.name;
    this.recent.push(`${this.head} ${kind}`);
    if (this.recent.length > RECENT) this.recent.shift();
    if (kind === 'turn.ended') {
      this.ended += 1;
      if (record.body.reason !== 'completed') {
        this.#fail(new Error(`a turn of ${this.session.id} ended ${String(record.body.reason)}`));
        return;
      }
    }
    this.#waiters.get(kind)?.shift()?.resolve(at);
  }

  #fail(error: Error): void {
    if (this.#closed) return;
    this.failure ??= error;
    for (const queue of this.#waiters.values()) {
      for (const waiter of queue.splice(0)) waiter.reject(error);
    }
  }
}

/**
 * Opens `count` sessions of a fresh install and a tail on each, TAIL_CHUNK at a time, each
 * from the cursor after `session.opened`.
 */
export async function sessionsWithTails(
  deployment: Deployment,
  client: TurnsClient,
  count: number,
): Promise<TurnTail[]> {
  const { key } = await client.install();
  const sessions = await client.openSessions(key, count);
  deployment.track(sessions);
  const tails: TurnTail[] = [];
  try {
    for (let i = 0; i < sessions.length; i += TAIL_CHUNK) {
      const chunk = sessions.slice(i, i + TAIL_CHUNK).map((s) => TurnTail.open(client.base, s, 2));
      tails.push(...(await Promise.all(chunk)));
    }
  } catch (error) {
    for (const tail of tails) tail.close();
    throw error;
  }
  return tails;
}
