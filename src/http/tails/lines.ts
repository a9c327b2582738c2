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
import type { TailLine } from '../../schemas/records.ts';
import { present, type Face } from '../../sessions/faces.ts';
import type { LogStore, StoredRecord } from '../../storage/log-store.ts';

export interface TailLinesOptions {
  readonly log: LogStore;
  readonly stream: string;
  /** First cursor, inclusive (row 68). */
  readonly from: number;
  /** Cursor to stop before, or undefined to follow until the session is archived. */
  readonly to: number | undefined;
  readonly face: Face;
  /**
   * Aborted when the tail is to end before its log does, with the `TailEnding` that says
   * why: its reader went, its token expired or no longer stands, the service stops or
   * its transport gave up on a reader that lags. One signal per tail, whatever ends it:
   * every open tail holds it (`npm run bench`, memory part).
   */
  readonly ended: AbortSignal;
  /** Hears why the log could not be read; the reader is told only that it could not. */
  readonly onError: (error: unknown) => void;
  /** Shares the public face's lines between the tails of one app (`SharedLines`). */
  readonly shared?: SharedLines;
  /**
   * The transport's way to take a line as its record lands, while it waits for the next
   * line (`TailOptions.deliver`): true when it wrote the line, false to have it yielded.
   */
  readonly offer?: (line: TailLine) => boolean;
}

/**
 * The public face's line of each landed record, and the bytes of lines, made once however
 * many tails serve them. A store's fan-out hands every tail of a stream the same record
 * object, so a record that reaches a thousand principals' tails is parsed, presented,
 * stringified and encoded once instead of a thousand times (`npm run bench`). Lines and
 * their bytes are never changed once made, so tails can share them; both maps hold their
 * keys weakly, so a record leaves them once no tail holds it. Other faces depend on their
 * reader and are presented per tail.
 */
export class SharedLines {
  readonly #lines = new WeakMap<StoredRecord, TailLine | null>();
  readonly #bytes = new WeakMap<TailLine, Buffer>();

  /** `present(record, face)`, from the shared line when the face is public. */
  present(record: StoredRecord, face: Face): TailLine | null {
    if (face.kind !== 'public') return present(record, face);
    let line = this.#lines.get(record);
    if (line === undefined) {
      line = present(record, face);
      this.#lines.set(record, line);
    }
    return line;
  }

  /** The UTF-8 of `JSON.stringify(line)` and a newline: the line as NDJSON writes it. */
  readonly jsonLine = (line: TailLine): Buffer => {
    let bytes = this.#bytes.get(line);
    if (bytes === undefined) {
      bytes = Buffer.from(`${JSON.stringify(line)}\n`);
      this.#bytes.set(line, bytes);
    }
    return bytes;
  };

  /** The UTF-8 of `JSON.stringify(line)`: the line as a WebSocket message. */
  readonly message = (line: TailLine): Buffer => this.jsonLine(line).subarray(0, -1);
}

/** Why a tail's token stopped standing, as its tail's `ended` signal carries it. */
export class TokenRevoked extends Error {
  override readonly name = 'TokenRevoked';
}

/**
 * Why a tail ends before its log does: the reason its `ended` signal aborts with.
 * `gone`: the reader went, and no last line is written.
 */
export type TailEnding = 'gone' | 'expired' | 'stopping' | 'lagging' | TokenRevoked;

/** Ends `tail` with `ending`, which its last line tells (`tailLines`). */
export function endTail(tail: AbortController, ending: TailEnding): void {
  tail.abort(ending);
}

function end(code: string, message: string, cursor: number | null): TailLine {
  return { Err: { code, message, cursor } };
}

/** The lines of one tail, in cursor order; see the module comment for how it ends. */
export function tailLines(options: TailLinesOptions): AsyncIterable<TailLine, void> {
  return new Lines(options);
}

type Step = IteratorResult<TailLine, void>;

const DONE: Step = { done: true, value: undefined };

/**
 * One tail's lines: an iterator over the store's tail, not a generator that loops over
 * it, and its steps are methods, not closures: every open tail waits for its next record
 * through every layer between it and its transport, and each layer a generator adds is
 * held by every waiting tail (its frame, its queued request and the await under way).
 * The transport pulls one line at a time, so no call of `next` overlaps another.
 */
class Lines implements AsyncIterableIterator<TailLine, void> {
  readonly #options: TailLinesOptions;
  /** The cursor a reader resumes from: one past the last record this tail went past. */
  #next: number;
  /** A record the transport takes as it lands never comes through the iterators below. */
  readonly #deliver: ((record: StoredRecord) => boolean) | undefined;
  /** The store's tail, from the first call of `next`. */
  #records: AsyncIterator<StoredRecord, unknown> | undefined;
  /** Done: the store's tail ended and the last line, if any, was given. */
  #done = false;

  constructor(options: TailLinesOptions) {
    this.#options = options;
    this.#next = Math.max(1, options.from);
    const { offer, ended } = options;
    this.#deliver =
      offer === undefined
        ? undefined
        : (record) => {
            if (ended.aborted) return false;
            const line = this.#lineOf(record);
            if (line !== null && !offer(line)) return false;
            this.#next = record.envelope.cursor + 1;
            return true;
          };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<Step> {
    if (this.#done) return Promise.resolve(DONE);
    // Ended while the transport held the previous line: the store's tail is let go of.
    if (this.#options.ended.aborted) return this.#close().then(() => this.#last());
    let records = this.#records;
    if (records === undefined) {
      try {
        records = this.#open();
      } catch (error) {
        return Promise.resolve(this.#failed(error));
      }
      this.#records = records;
    }
    return records.next().then(this.#took, this.#failed);
  }

  /** The reader stopped pulling lines: the store's tail is let go of. */
  async return(): Promise<Step> {
    this.#done = true;
    await this.#records?.return?.();
    return DONE;
  }

  #open(): AsyncIterator<StoredRecord, unknown> {
    const options = this.#options;
    const tail = options.log.tail(options.stream, {
      from: options.from,
      ...(options.to === undefined ? {} : { to: options.to }),
      signal: options.ended,
      ...(this.#deliver === undefined ? {} : { deliver: this.#deliver }),
    });
    return tail[Symbol.asyncIterator]();
  }

  /**
   * The line of a record from the store's tail; the next one when its face shows none.
   * This and `#failed` are the callbacks of every `next`, made once per tail.
   */
  readonly #took = (result: IteratorResult<StoredRecord, unknown>): Step | Promise<Step> => {
    if (result.done === true) return this.#last();
    const record = result.value;
    this.#next = record.envelope.cursor + 1;
    let line: TailLine | null;
    try {
      line = this.#lineOf(record);
    } catch (error) {
      return this.#close().then(() => this.#failed(error));
    }
    return line === null ? this.next() : { done: false, value: line };
  };

  /** The store's tail failed: the last line says so, unless the tail was ending anyway. */
  readonly #failed = (error: unknown): Step => {
    if (this.#options.ended.aborted) return this.#last();
    this.#done = true;
    this.#options.onError(error);
    return {
      done: false,
      value: end('read_failed', 'the log could not be read; tail again to read on', this.#next),
    };
  };

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
    const { ended } = this.#options;
    if (!ended.aborted) return null;
    const ending = ended.reason as TailEnding;
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
