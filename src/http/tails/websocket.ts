/**
 * The tail over WebSocket (decisions row 3): one text message per line, the same `Ok` and
 * `Err` objects the NDJSON tail writes, then a close frame saying why the tail ended.
 *
 * Backpressure per connection: a line is pulled only after the previous
 * one was handed to the socket. Once a message would take more than `bufferBytes` into
 * the socket's user-space buffer (`bufferedAmount`), nothing more is pulled until it is
 * written; if that takes longer than `lagMs` the reader is lagging and the connection is
 * closed with 1013 (try again later) and a reason, rather than holding its records in
 * memory. The reader tails again from the cursor after the last record it received.
 * A peer that stops answering pings is ended by the app's heartbeat (`heartbeat.ts`).
 *
 * Pacing: `ws` writes each message to the connection at once, one system call per
 * message. The connection under the socket (`wire`) is paced instead by the app's pacer
 * (`pacer.ts`): the lines a tail receives within a few milliseconds go out in one write,
 * each its own message, in order.
 */
import { WebSocket } from 'ws';
import type { TailLine } from '../../schemas/records.ts';
import { pullFrom, type StepSink } from '../../storage/pull.ts';
import type { LineTaker } from './lines.ts';
import type { LineBuffer } from './ndjson.ts';
import { UNPACED, type Paced, type PacedWire, type Pacer } from './pacer.ts';

/** What the tail needs of a socket. */
export type TailSocket = Pick<
  WebSocket,
  'send' | 'close' | 'terminate' | 'readyState' | 'bufferedAmount'
>;

/** A Buffer is sent as the text it encodes: lines are always text messages. */
const TEXT = { binary: false } as const;

/** Read anew on every call: the state changes while a send waits. */
function isOpen(socket: TailSocket): boolean {
  return socket.readyState === WebSocket.OPEN;
}

/** Defaults: a quarter MiB of unsent lines, five seconds to drain it (≥ 50 KiB/s). */
const WEBSOCKET_BUFFER: LineBuffer = { bufferBytes: 256 * 1024, lagMs: 5_000 };

/** Close codes (RFC 6455 §7.4.1) and reasons (≤ 123 bytes) by how the tail ended. */
export const CLOSE = {
  ended: { code: 1000, reason: 'the tail ended' },
  expired: { code: 1008, reason: 'the token expired' },
  revoked: { code: 1008, reason: 'the token no longer stands' },
  stopping: { code: 1001, reason: 'the service is stopping' },
  failed: { code: 1011, reason: 'the log could not be read' },
  lagging: {
    code: 1013,
    reason: 'the reader lags behind the log; tail again from after its last record',
  },
} as const;

/** The close frame that follows the last line of a tail. */
function closeAfter(last: TailLine | undefined): { code: number; reason: string } {
  if (last === undefined || !('Err' in last)) return CLOSE.ended;
  switch (last.Err.code) {
    case 'token_expired':
      return CLOSE.expired;
    case 'token_revoked':
      return CLOSE.revoked;
    case 'service_stopping':
      return CLOSE.stopping;
    case 'read_failed':
      return CLOSE.failed;
    default:
      return CLOSE.ended;
  }
}

/** Resolves true when `flushed` settles within `ms`, false on the timer or on `cut`. */
async function settlesWithin(flushed: Promise<void>, ms: number, cut: AbortSignal) {
  if (cut.aborted) return false;
  let timer: NodeJS.Timeout | undefined;
  let onCut: (() => void) | undefined;
  try {
    return await Promise.race([
      flushed.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(resolve, ms, false);
        onCut = () => {
          resolve(false);
        };
        cut.addEventListener('abort', onCut, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onCut !== undefined) cut.removeEventListener('abort', onCut);
  }
}

/** How a `LineSender` writes. */
export interface LineSenderOptions {
  /** The connection under the socket, paced by `pacer` (see the file header). */
  readonly wire?: PacedWire;
  readonly pacer?: Pacer;
  /**
   * A line's message: its JSON text, or that text's UTF-8 when the caller shares the
   * bytes of lines between tails (`SharedLines.message`). `JSON.stringify` by default.
   */
  readonly encode?: (line: TailLine) => string | Buffer;
}

/** Hears how a `LineSender`'s send ended: undefined when it ended cleanly. */
export type SendOver = (error?: unknown) => void;

/** The cut of a sender with no send under way: never aborted. */
const UNCUT = new AbortController().signal;

/**
 * Sends the lines of one tail over one socket. `send` pulls lines from the tail and
 * writes them; `offer` lets the tail's store hand over a line as it lands, while `send`
 * waits for the next one, without a trip through the tail's iterators (`TailOptions.
 * deliver`): it writes the line when the socket takes it below the mark, else leaves it
 * to `send`, which waits for the socket as described above.
 *
 * The send is a loop of pulls (`pull.ts`) whose sink is the sender itself, not an async
 * function: every open tail waits in it for its next line, and an async function's
 * suspended frame, with the promises of the await under way, is held by each
 * (`docs/benchmarks.md`, "Open tails").
 */
export class LineSender implements StepSink<TailLine>, LineTaker {
  readonly #socket: TailSocket;
  readonly #limits: LineBuffer;
  readonly #encode: (line: TailLine) => string | Buffer;
  /** Held before each write (`pacer.ts`). */
  readonly #paced: Pick<Paced, 'hold'>;
  #last: TailLine | undefined;
  /** The send under way: its lines, what cuts it and who hears its end. */
  #lines: AsyncIterator<TailLine> | undefined;
  #cut: AbortSignal = UNCUT;
  #over: SendOver | undefined;

  constructor(
    socket: TailSocket,
    limits: LineBuffer = WEBSOCKET_BUFFER,
    options: LineSenderOptions = {},
  ) {
    this.#socket = socket;
    this.#limits = limits;
    this.#encode = options.encode ?? JSON.stringify;
    this.#paced = options.pacer?.wire(options.wire) ?? UNPACED;
  }

  /** See `LineTaker`: writes `line` now when the socket is open and takes it below the mark. */
  offer(line: TailLine): boolean {
    return isOpen(this.#socket) && this.#sendBelowMark(line, this.#encode(line));
  }

  /** Sends `message`, the text of `line`, when the buffer stays below the mark. */
  #sendBelowMark(line: TailLine, message: string | Buffer): boolean {
    if (this.#socket.bufferedAmount + message.length > this.#limits.bufferBytes) return false;
    this.#paced.hold();
    this.#socket.send(message, TEXT);
    this.#last = line;
    return true;
  }

  /**
   * Sends every line of `source` as a text message, then closes the socket with the code
   * that says why the tail ended; calls `over` once the tail is over or the reader has
   * gone, with the error when the source or the socket failed. `cut` (the service
   * stopping) ends a send stuck behind a reader that stopped reading. One send per sender.
   * As `for await` would, a send that stops before its source ends returns the source.
   */
  send(source: AsyncIterable<TailLine>, cut: AbortSignal, over: SendOver): void {
    this.#cut = cut;
    this.#over = over;
    try {
      this.#lines = source[Symbol.asyncIterator]();
    } catch (error) {
      this.#end(error);
      return;
    }
    this.#pull();
  }

  #pull(): void {
    const lines = this.#lines;
    if (lines !== undefined) pullFrom(lines, this);
  }

  /** See `StepSink`: the next line, or the end of the lines. */
  took(step: IteratorResult<TailLine, void>): void {
    if (step.done === true) {
      this.#closeAfterLast();
      this.#end();
      return;
    }
    try {
      this.#write(step.value);
    } catch (error) {
      this.#stop(error);
    }
  }

  /** See `StepSink`: the lines failed. */
  failed(error: unknown): void {
    this.#end(error);
  }

  #write(line: TailLine): void {
    const socket = this.#socket;
    if (!isOpen(socket)) {
      this.#stop();
      return;
    }
    const message = this.#encode(line);
    if (this.#sendBelowMark(line, message)) {
      this.#pull();
      return;
    }
    // Over the mark: this message is followed until it is written.
    this.#paced.hold();
    const flushed = new Promise<void>((resolve) => {
      socket.send(message, TEXT, () => {
        resolve();
      });
    });
    this.#last = line;
    settlesWithin(flushed, this.#limits.lagMs, this.#cut).then(
      (written) => {
        this.#settled(written);
      },
      (error: unknown) => {
        this.#stop(error);
      },
    );
  }

  /** The message over the mark was written (`written`), or the wait for it gave up. */
  #settled(written: boolean): void {
    if (written) {
      this.#pull();
      return;
    }
    const socket = this.#socket;
    if (isOpen(socket)) {
      if (this.#cut.aborted) {
        // Stopping: a close frame queued behind unread data would hold the shutdown.
        socket.terminate();
      } else {
        socket.close(CLOSE.lagging.code, CLOSE.lagging.reason);
      }
    }
    this.#stop();
  }

  #closeAfterLast(): void {
    if (isOpen(this.#socket)) {
      const { code, reason } = closeAfter(this.#last);
      this.#socket.close(code, reason);
    }
  }

  /** Stops before the source ended: returns it, then ends with `error`, if any. */
  #stop(error?: unknown): void {
    // As `for await`: an error of the loop's body wins over one of the return.
    let returned: Promise<unknown>;
    try {
      returned = Promise.resolve(this.#lines?.return?.());
    } catch (thrown) {
      this.#end(error ?? thrown);
      return;
    }
    returned.then(
      () => {
        this.#end(error);
      },
      (thrown: unknown) => {
        this.#end(error ?? thrown);
      },
    );
  }

  /** Ends the send once: lets go of its lines and tells `over`. */
  #end(error?: unknown): void {
    const over = this.#over;
    this.#over = undefined;
    this.#lines = undefined;
    this.#cut = UNCUT;
    over?.(error);
  }
}
