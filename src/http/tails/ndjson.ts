/**
 * JSON lines over HTTP (interface 1, decisions row 3): `application/jsonstream`, one
 * object per `\n`-terminated line, no heartbeats, written as the lines come.
 *
 * Framing: a live tail's body is delimited by the connection's close
 * (RFC 9112 §6.3, `live`), not chunked, so a line is written as its own bytes,
 * shared by every tail that serves it, with no chunk header and trailer of its own, and
 * the lines a pacing window gathers (`pacer.ts`) leave in one write. Lines say
 * themselves why a tail ended (the last record, or an `Err` line), which chunked
 * framing's last chunk would otherwise say; a tail's connection is not reused. A read
 * that ends at the head by itself (the audit) keeps the default chunked framing.
 *
 * Backpressure per connection: a line is pulled from its source only
 * once the previous one was written. Once the unsent bytes held for the connection pass
 * `bufferBytes` (at least the socket's own high-water mark), nothing more is pulled until
 * they are written; if that takes longer than `lagMs` the reader lags behind the log, and
 * the tail ends with one last line saying so (`Err reader_lagging` with the cursor to
 * tail again from, through `onLag`), after which the connection is closed, read or not,
 * `lagMs` later. A connection thus holds at most `bufferBytes` and one line, however slow
 * its reader; the source (a log store tail) never waits on it, since the store buffers
 * each tail boundedly and catches a lagging one up from the log.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { streamLongLived } from '../timeouts.ts';
import { UNPACED, type Paced, type Pacer } from './pacer.ts';

/** The media type of the tails (interface 1). */
export const JSONSTREAM = 'application/jsonstream';

/** An OpenAPI answer entry for a route that answers JSON lines of `line`. */
export function jsonStreamAnswer(line: z.ZodType, description: string) {
  return { description, content: { [JSONSTREAM]: { schema: line } } };
}

/** How a writer bounds what it holds for a slow reader. */
export interface LineBuffer {
  /** Unsent bytes above which no line is pulled. */
  readonly bufferBytes: number;
  /** How long the bytes may stay above it before the reader counts as lagging (ms). */
  readonly lagMs: number;
}

/** The bound when the caller gives none: a quarter MiB, five seconds to drain it. */
const DEFAULT_BUFFER: LineBuffer = { bufferBytes: 256 * 1024, lagMs: 5_000 };

/** The reason a wait for a reader was given up on when its time was up. */
const LATE = 'late';

/** How `raw` ended a wait for its reader. */
type Drain = 'drained' | 'closed' | 'late';

/** Waits up to `ms` for `raw` to drain; 'closed' when it closed or `cut` aborted first. */
async function drained(raw: ServerResponse, cut: AbortSignal, ms: number): Promise<Drain> {
  if (cut.aborted || raw.destroyed) return 'closed';
  const stop = new AbortController();
  const abort = (): void => {
    stop.abort();
  };
  cut.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(() => {
    stop.abort(LATE);
  }, ms);
  try {
    return await Promise.race([
      once(raw, 'drain', { signal: stop.signal }).then(() => 'drained' as const),
      once(raw, 'close', { signal: stop.signal }).then(() => 'closed' as const),
    ]);
  } catch {
    // `once` rejects with an AbortError when `cut` fires or the time is up.
    return stop.signal.reason === LATE ? 'late' : 'closed';
  } finally {
    clearTimeout(timer);
    cut.removeEventListener('abort', abort);
    stop.abort();
  }
}

/** How a `JsonLineWriter` writes. */
export interface JsonLineWriterOptions<T> {
  /**
   * A line with its newline: its JSON text unless the caller shares lines' bytes
   * (`SharedLines.jsonLine`).
   */
  readonly encode?: (line: T) => string | Buffer;
  /** The app's pacer (`pacer.ts`); unpaced without one. */
  readonly pacer?: Pacer;
  /**
   * A live tail, open for as long as records come: its body is delimited by closing the
   * connection instead of chunks (see the file header), and its connection is exempt
   * from the inactivity timeout once the headers are out (`streamLongLived`).
   */
  readonly live?: boolean;
  readonly buffer?: LineBuffer;
  /**
   * Called once when the reader lags: the source then ends with a line that says so.
   * Without it a lagging connection is closed at once.
   */
  readonly onLag?: () => void;
}

/**
 * Writes the lines of one tail as JSON lines on a hijacked reply. Writes are paced: the
 * lines a reader receives within a few milliseconds go out in one write. `offer` lets the
 * tail's store hand over a line as it lands, while `write` waits for the next one
 * (`TailOptions.deliver`).
 */
export class JsonLineWriter<T> {
  readonly #encode: (line: T) => string | Buffer;
  readonly #options: JsonLineWriterOptions<T>;
  readonly #buffer: LineBuffer;
  /** The response, once its headers are out and while the reader keeps up. */
  #raw: ServerResponse | undefined;
  /** Held before each write (`pacer.ts`), once the response is under way. */
  #paced: Pick<Paced, 'hold'> = UNPACED;

  constructor(options: JsonLineWriterOptions<T> = {}) {
    this.#encode = options.encode ?? ((line) => `${JSON.stringify(line)}\n`);
    this.#options = options;
    this.#buffer = options.buffer ?? DEFAULT_BUFFER;
  }

  /** Whether `raw` holds more unsent bytes than the bound. */
  #over(raw: ServerResponse): boolean {
    return raw.writableNeedDrain && raw.writableLength > this.#buffer.bufferBytes;
  }

  /** Writes `line` now when the response is under way and under its bound; else false. */
  offer(line: T): boolean {
    const raw = this.#raw;
    if (raw === undefined || raw.destroyed || this.#over(raw)) return false;
    this.#paced.hold();
    raw.write(this.#encode(line));
    return true;
  }

  /**
   * Answers 200 with the lines of `source` and ends the response when the source ends.
   * `cut` ends a writer stuck behind a reader that stopped reading (the service stops):
   * the response is then destroyed, since nothing more can reach that reader. Headers
   * set by hooks (request id, rate limits) are kept.
   */
  async write(reply: FastifyReply, source: AsyncIterable<T>, cut: AbortSignal): Promise<void> {
    const headers = reply.getHeaders();
    void reply.hijack();
    const raw = reply.raw;
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) raw.setHeader(name, value);
    }
    const live = this.#options.live === true;
    if (live) {
      // Neither a length nor chunks (see the file header).
      raw.removeHeader('content-length');
      raw.removeHeader('transfer-encoding');
      raw.setHeader('connection', 'close');
    }
    raw.writeHead(200, {
      'content-type': JSONSTREAM,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    // A tail may wait long for its first record: the reader learns at once it is attached.
    raw.flushHeaders();
    if (live) streamLongLived(raw.socket);
    this.#paced = this.#options.pacer?.wire(raw.socket ?? undefined) ?? UNPACED;
    this.#raw = raw;
    let lagging = false;
    try {
      for await (const line of source) {
        if (raw.destroyed) break;
        this.#paced.hold();
        raw.write(this.#encode(line));
        if (lagging || !this.#over(raw)) continue;
        const drain = await drained(raw, cut, this.#buffer.lagMs);
        if (drain === 'drained') continue;
        if (drain === 'late' && this.#options.onLag !== undefined) {
          // The source ends with the line that says why; nothing more is offered.
          lagging = true;
          this.#raw = undefined;
          this.#options.onLag();
          continue;
        }
        raw.destroy();
        break;
      }
    } finally {
      this.#raw = undefined;
      if (!raw.destroyed) {
        raw.end();
        if (lagging) closeLater(raw, this.#buffer.lagMs);
      }
    }
  }
}

/** Destroys `raw` in `ms` unless it closed by then: its reader may never read again. */
function closeLater(raw: ServerResponse, ms: number): void {
  const timer = setTimeout(() => {
    raw.destroy();
  }, ms);
  timer.unref();
  raw.once('close', () => {
    clearTimeout(timer);
  });
}

/** `new JsonLineWriter(options).write(reply, source, cut)`, for a source nothing hands over. */
export function writeJsonLines<T>(
  reply: FastifyReply,
  source: AsyncIterable<T>,
  cut: AbortSignal,
  options?: JsonLineWriterOptions<T>,
): Promise<void> {
  return new JsonLineWriter(options).write(reply, source, cut);
}
