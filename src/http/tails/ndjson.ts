/**
 * JSON lines over HTTP (interface 1, decisions row 3): `application/jsonstream`, one
 * object per `\n`-terminated line, no heartbeats, written as the lines come.
 *
 * Backpressure per connection: a line is pulled from its source only once the previous
 * one was accepted, and when `write()` answers false (the socket's buffer is over its
 * high-water mark) the writer waits for `drain` before pulling again. A connection thus
 * holds at most its socket buffer and one line, however slow its reader; the source (a
 * log store tail) never waits on it, since the store buffers each tail boundedly and
 * catches a lagging one up from the log.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { pacer } from './pacer.ts';

/** The media type of the tails (interface 1). */
export const JSONSTREAM = 'application/jsonstream';

/** An OpenAPI answer entry for a route that answers JSON lines of `line`. */
export function jsonStreamAnswer(line: z.ZodType, description: string) {
  return { description, content: { [JSONSTREAM]: { schema: line } } };
}

/** Resolves once `raw` drains; false when it closed or `cut` aborted first. */
async function drained(raw: ServerResponse, cut: AbortSignal): Promise<boolean> {
  if (cut.aborted || raw.destroyed) return false;
  const stop = new AbortController();
  const abort = (): void => {
    stop.abort();
  };
  cut.addEventListener('abort', abort, { once: true });
  try {
    const which = await Promise.race([
      once(raw, 'drain', { signal: stop.signal }).then(() => 'drain' as const),
      once(raw, 'close', { signal: stop.signal }).then(() => 'close' as const),
    ]);
    return which === 'drain';
  } catch {
    // `once` rejects with an AbortError when `cut` fires.
    return false;
  } finally {
    cut.removeEventListener('abort', abort);
    stop.abort();
  }
}

/**
 * Writes the lines of one tail as JSON lines on a hijacked reply. `encode` makes a line
 * with its newline (its JSON text unless the caller shares lines' bytes,
 * `SharedLines.jsonLine`). Writes are paced (`pacer.ts`): the lines a reader receives
 * within a few milliseconds go out in one write. `offer` lets the tail's store hand over
 * a line as it lands, while `write` waits for the next one (`TailOptions.deliver`).
 */
export class JsonLineWriter<T> {
  readonly #encode: (line: T) => string | Buffer;
  /** The response, once its headers are out. */
  #raw: ServerResponse | undefined;
  #hold: () => void = () => undefined;

  constructor(encode: (line: T) => string | Buffer = (line) => `${JSON.stringify(line)}\n`) {
    this.#encode = encode;
  }

  /** Writes `line` now when the response is under way and not waiting to drain; else false. */
  readonly offer = (line: T): boolean => {
    const raw = this.#raw;
    if (raw === undefined || raw.destroyed || raw.writableNeedDrain) return false;
    this.#hold();
    raw.write(this.#encode(line));
    return true;
  };

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
    raw.writeHead(200, {
      'content-type': JSONSTREAM,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    // A tail may wait long for its first record: the reader learns at once it is attached.
    raw.flushHeaders();
    this.#hold = pacer(raw.socket ?? undefined);
    this.#raw = raw;
    try {
      for await (const line of source) {
        if (raw.destroyed) break;
        this.#hold();
        if (!raw.write(this.#encode(line)) && !(await drained(raw, cut))) {
          raw.destroy();
          break;
        }
      }
    } finally {
      this.#raw = undefined;
      if (!raw.destroyed) raw.end();
    }
  }
}

/** `new JsonLineWriter(encode).write(reply, source, cut)`, for a source nothing hands over. */
export function writeJsonLines<T>(
  reply: FastifyReply,
  source: AsyncIterable<T>,
  cut: AbortSignal,
  encode?: (line: T) => string | Buffer,
): Promise<void> {
  return new JsonLineWriter(encode).write(reply, source, cut);
}
