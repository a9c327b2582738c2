/**
 * The lines of a session tail (4.2; decisions rows 67 and 68), the one source both the
 * NDJSON and the WebSocket transports serve: the log store's tail, read through the
 * reader's face, one `{Ok}` or `{Err}` line per record shown.
 *
 * The tail follows new records until the store ends it (after `session.archived`, or
 * before `to`), and ends early, with a last `Err` line, when the token expires
 * (`token_expired`) or no longer stands (`token_revoked`: its install key was rotated or
 * revoked, its install deleted, or the console user who minted it removed from the
 * tenant; see `standing-watch.ts`), when the service stops (`service_stopping`), when the
 * reader lags so far behind that its transport gives up on it (`reader_lagging`) or when
 * the log cannot be read (`read_failed`); those lines carry the cursor to resume from, or
 * null. When the reader goes away (`gone`) it ends without a line.
 *
 * Pull-based: a line is produced only when the transport asks for the next one, so a
 * slow reader holds at most one line here; the store's tail keeps its own bounded buffer
 * and catches up from the log when it overflows, never holding appends or other tails.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { TailLine } from '../../schemas/records.ts';
import { present, type Face } from '../../sessions/faces.ts';
import type { LogStore, StoredRecord } from '../../storage/log-store.ts';
import {
  DONE,
  Pulled,
  pullFrom,
  tellLater,
  type Pullable,
  type StepSink,
} from '../../storage/pull.ts';
import type { SharedLines } from './shared-lines.ts';
import { TokenRevoked, type TailEnd } from './tail-end.ts';

export interface TailLinesOptions {
  readonly log: LogStore;
  readonly stream: string;
  /** First cursor, inclusive (row 68). */
  readonly from: number;
  /** Cursor to stop before, or undefined to follow until the session is archived. */
  readonly to: number | undefined;
  readonly face: Face;
  /**
   * Ends the tail before its log does, with the `TailEnding` that says why: its reader
   * went, its token expired or no longer stands, the service stops or its transport gave
   * up on a reader that lags. One per tail, whatever ends it.
   */
  readonly ended: TailEnd;
  /** The logger of the request that opened the tail: a tail keeps that, not its request. */
  readonly requestLog: FastifyBaseLogger;
  /**
   * Hears why the log could not be read, with the tail's `requestLog`; the reader is told
   * only that it could not. One function for every tail of an app, not a closure each.
   */
  readonly onError: (error: unknown, requestLog: FastifyBaseLogger) => void;
  /** Shares the public face's lines between the tails of one app (`SharedLines`). */
  readonly shared?: SharedLines;
  /** The transport, which may take a line as its record lands (`LineTaker`). */
  readonly taker?: LineTaker;
}

/**
 * A transport that takes a line as its record lands, while it waits for the next line
 * (`TailOptions.deliver`): `offer` answers true when it wrote the line, false to have it
 * yielded.
 */
export interface LineTaker {
  offer(line: TailLine): boolean;
}

function end(code: string, message: string, cursor: number | null): TailLine {
  return { Err: { code, message, cursor } };
}

/** The lines of one tail, in cursor order; see the module comment for how it ends. */
export function tailLines(options: TailLinesOptions): AsyncIterable<TailLine, void> & {
  [Symbol.asyncIterator](): Pullable<TailLine>;
} {
  return new Lines(options);
}

type Step = IteratorResult<TailLine, void>;

/**
 * One tail's lines: an iterator over the store's tail, not a generator that loops over
 * it, and its steps are methods, not closures: every open tail waits for its next record
 * through every layer between it and its transport, and each layer a generator adds is
 * held by every waiting tail (its frame, its queued request and the await under way).
 * Pulled (`pull.ts`), as the WebSocket transport does, it pulls the store's tail in turn
 * and is its sink: a waiting tail then holds no promise in any layer. The transport pulls
 * one line at a time, so no pull overlaps another.
 */
class Lines extends Pulled<TailLine> implements StepSink<StoredRecord> {
  readonly #options: TailLinesOptions;
  /** The cursor a reader resumes from: one past the last record this tail went past. */
  #next: number;
  /** A record the transport takes as it lands never comes through the iterators below. */
  readonly #deliver: ((record: StoredRecord) => boolean) | undefined;
  /** The store's tail, from the first pull. */
  #records: AsyncIterator<StoredRecord, unknown> | undefined;
  /** The consumer of the pull under way, which waits on the store's tail. */
  #sink: StepSink<TailLine> | undefined;
  /** Done: the store's tail ended and the last line, if any, was given. */
  #done = false;

  constructor(options: TailLinesOptions) {
    super();
    this.#options = options;
    this.#next = Math.max(1, options.from);
    const { taker, ended } = options;
    this.#deliver =
      taker === undefined
        ? undefined
        : (record) => {
            if (ended.ended) return false;
            const line = this.#lineOf(record);
            if (line !== null && !taker.offer(line)) return false;
            this.#next = record.envelope.cursor + 1;
            return true;
          };
    ended.hear(this);
  }

  pull(sink: StepSink<TailLine>): void {
    if (this.#done) {
      tellLater(sink, DONE);
      return;
    }
    // Ended while the transport held the previous line: the store's tail is let go of.
    if (this.#options.ended.ended) {
      this.#close().then(
        () => {
          sink.took(this.#last());
        },
        (error: unknown) => {
          sink.failed(error);
        },
      );
      return;
    }
    let records = this.#records;
    if (records === undefined) {
      try {
        records = this.#open();
      } catch (error) {
        tellLater(sink, this.#failure(error));
        return;
      }
      this.#records = records;
    }
    this.#sink = sink;
    pullFrom(records, this);
  }

  /**
   * The tail was ended (`TailEnd`): a pull waiting on the store's tail wakes, as the
   * store's tail ends on `return`, and takes the last line. The store's tail is given
   * no signal of its own to listen to.
   */
  ending(): void {
    if (this.#sink === undefined) return;
    const records = this.#records;
    this.#records = undefined;
    Promise.resolve(records?.return?.()).catch((error: unknown) => {
      this.#options.onError(error, this.#options.requestLog);
    });
  }

  /** The reader stopped pulling lines: the store's tail is let go of. */
  async return(): Promise<Step> {
    this.#done = true;
    await this.#close();
    return DONE;
  }

  #open(): AsyncIterator<StoredRecord, unknown> {
    const options = this.#options;
    const tail = options.log.tail(options.stream, {
      from: options.from,
      ...(options.to === undefined ? {} : { to: options.to }),
      ...(this.#deliver === undefined ? {} : { deliver: this.#deliver }),
    });
    return tail[Symbol.asyncIterator]();
  }

  /** See `StepSink`: the store's tail answered the pull under way. */
  took(result: IteratorResult<StoredRecord, unknown>): void {
    const sink = this.#sink;
    this.#sink = undefined;
    if (sink === undefined) return;
    if (result.done === true) {
      sink.took(this.#last());
      return;
    }
    const record = result.value;
    this.#next = record.envelope.cursor + 1;
    let line: TailLine | null;
    try {
      line = this.#lineOf(record);
    } catch (error) {
      this.#close().then(
        () => {
          sink.took(this.#failure(error));
        },
        (thrown: unknown) => {
          sink.failed(thrown);
        },
      );
      return;
    }
    // A record its face shows nothing of: the next one.
    if (line === null) this.pull(sink);
    else sink.took({ done: false, value: line });
  }

  /** See `StepSink`: the store's tail failed. */
  failed(error: unknown): void {
    const sink = this.#sink;
    this.#sink = undefined;
    sink?.took(this.#failure(error));
  }

  /** The store's tail failed: the last line says so, unless the tail was ending anyway. */
  #failure(error: unknown): Step {
    if (this.#options.ended.ended) return this.#last();
    this.#done = true;
    this.#options.onError(error, this.#options.requestLog);
    return {
      done: false,
      value: end('read_failed', 'the log could not be read; tail again to read on', this.#next),
    };
  }

  async #close(): Promise<void> {
    const records = this.#records;
    this.#records = undefined;
    await records?.return?.();
  }

  /** The line that says why the tail ended, if one does; nothing follows it. */
  #last(): Step {
    this.#done = true;
    const line = this.#why();
    return line === null ? DONE : { done: false, value: line };
  }

  #lineOf(record: StoredRecord): TailLine | null {
    const { shared, face } = this.#options;
    return shared === undefined ? present(record, face) : shared.present(record, face);
  }

  /** The last line of a tail that ended before its log did, or null. */
  #why(): TailLine | null {
    const ending = this.#options.ended.reason;
    if (ending === undefined) return null;
    const next = this.#next;
    if (ending instanceof TokenRevoked) {
      return end(
        'token_revoked',
        `the token no longer stands: ${ending.message}; read on with a token that does`,
        next,
      );
    }
    switch (ending) {
      case 'expired':
        return end('token_expired', 'the token expired; mint a fresh one to read on', next);
      case 'stopping':
        return end('service_stopping', 'the service is stopping; tail again to read on', next);
      case 'lagging':
        return end('reader_lagging', 'the reader fell too far behind; tail again to read on', next);
      default:
        return null;
    }
  }
}
