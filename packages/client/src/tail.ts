/**
 * Tails as async iterables. A tail yields each landed record once, in
 * cursor order, and survives any disconnect: it reconnects from one past the last cursor
 * it yielded (so nothing is missed and nothing repeats), and after the service's own
 * `reader_lagging`, `service_stopping` or `read_failed` from the cursor the service names.
 * It ends at `to`, after `session.archived`, at the token's expiry (`token_expired`), when
 * the token no longer stands (`token_revoked`: its install key rotated or revoked, say) or
 * when `signal` aborts.
 */
import { ndjsonLines, TailDisconnected, webSocketLines, type TailLine } from './lines.ts';
import type { components } from './openapi.ts';
import { ServiceProblem } from './problem.ts';
import { backoffMs, sleep, type Fetch, type RetryPolicy } from './transport.ts';

export type LandedRecord = components['schemas']['LandedRecord'];

/** Why a tail ended (the generator's return value). */
export type TailEnd = 'to' | 'archived' | 'token_expired' | 'token_revoked' | 'aborted';

export interface TailOptions {
  /** First cursor to read, inclusive; 1 by default. */
  readonly from?: number;
  /** Cursor to stop before; absent, the tail follows new records. */
  readonly to?: number;
  /** Ends the tail: the iteration returns `aborted`. */
  readonly signal?: AbortSignal;
  /** `ndjson` (fetch, the default) or `websocket`. */
  readonly transport?: 'ndjson' | 'websocket';
  /** Reconnects in a row that deliver no record before the tail throws; 8 by default. */
  readonly reconnects?: number;
}

/** What a tail reads with: the session, its token and the client's transports. */
export interface TailSource {
  readonly baseUrl: string;
  readonly session: string;
  readonly token: string;
  readonly fetch: Fetch;
  readonly retry: RetryPolicy;
  readonly WebSocket: typeof WebSocket | undefined;
}

/** `Err` codes after which the tail reads on from the cursor they carry. */
const RESUMABLE = new Set(['reader_lagging', 'service_stopping', 'read_failed']);

/** The lines of one connection from `from`; returns whether the service said it ended. */
function connect(
  source: TailSource,
  options: TailOptions,
  from: number,
  signal: AbortSignal,
): AsyncGenerator<TailLine, boolean> {
  const url = new URL(`${source.baseUrl}/sessions/${encodeURIComponent(source.session)}/events`);
  url.searchParams.set('from', String(from));
  if (options.to !== undefined) url.searchParams.set('to', String(options.to));
  const request = { url, token: source.token, signal };
  if (options.transport !== 'websocket') return ndjsonLines(source.fetch, request);
  const Socket = source.WebSocket ?? globalThis.WebSocket;
  return webSocketLines(Socket, request);
}

/**
 * Whether a connection that ended without an error line ended the tail. Without `to` the
 * service ends a tail cleanly only after `session.archived` (returned before this), so
 * any other end is a cut. With `to`, a connection the service ended said so (WebSocket
 * close 1000); a close-delimited NDJSON body that delivered lines may have been cut, so
 * the tail reads on from the next cursor, and a connection that ends having delivered no
 * line at all was ended by the service (the tail waits for records otherwise).
 */
function endedTail(options: TailOptions, said: boolean, lines: number): boolean {
  if (options.to === undefined) return false;
  return said || lines === 0;
}

/** The records of `source`'s session; see the module comment. */
export async function* tail(
  source: TailSource,
  options: TailOptions = {},
): AsyncGenerator<LandedRecord, TailEnd> {
  const limit = options.reconnects ?? 8;
  const signal = options.signal;
  // A function, not a narrowed property: the signal aborts while the tail awaits.
  const aborted = (): boolean => signal?.aborted === true;
  let next = Math.max(1, options.from ?? 1);
  let failures = 0;
  for (;;) {
    if (options.to !== undefined && next >= options.to) return 'to';
    if (aborted()) return 'aborted';
    // One controller per connection: leaving the loop (break, return, abort) ends it.
    const connection = new AbortController();
    const stop = (): void => {
      connection.abort(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
    const lines = connect(source, options, next, connection.signal);
    let count = 0;
    try {
      for (;;) {
        const step = await lines.next();
        if (step.done === true) {
          if (aborted()) return 'aborted';
          if (endedTail(options, step.value, count)) return 'to';
          break;
        }
        count += 1;
        const line = step.value;
        if ('Err' in line) {
          if (line.Err.code === 'token_expired') return 'token_expired';
          if (line.Err.code === 'token_revoked') return 'token_revoked';
          if (!RESUMABLE.has(line.Err.code)) throw new Error(`tail: ${line.Err.message}`);
          // The service names the cursor to read on from; nothing before it is lost.
          next = Math.max(next, line.Err.cursor ?? next);
          continue;
        }
        const record = line.Ok;
        // After a reconnect the service starts at `next`; a record before it never repeats.
        if (record.envelope.cursor < next) continue;
        next = record.envelope.cursor + 1;
        failures = 0;
        yield record;
        if (record.envelope.kind.name === 'session.archived') return 'archived';
      }
    } catch (error) {
      if (aborted()) return 'aborted';
      // A refusal (401, 403, 404, …) ends the tail; 429 and 503 were retried already.
      if (error instanceof ServiceProblem) throw error;
      if (!(error instanceof TailDisconnected || error instanceof TypeError)) throw error;
    } finally {
      signal?.removeEventListener('abort', stop);
      connection.abort();
      await lines.return(false).catch(() => undefined);
    }
    // The connection reached `to` (a close-delimited NDJSON body): the tail is over, with
    // no wait for a reconnect it does not need.
    if (options.to !== undefined && next >= options.to) return 'to';
    failures += 1;
    if (failures > limit) throw new Error(`tail: ${limit} reconnects in a row delivered nothing`);
    try {
      await sleep(backoffMs(source.retry, failures - 1), signal);
    } catch {
      return 'aborted';
    }
  }
}
