/**
 * The two transports of a tail as one shape: an async iterable of the lines the service
 * writes (`{"Ok": record}` or `{"Err": reason}`), over NDJSON (`fetch`) or a WebSocket.
 * A line source throws when the connection was lost, and returns whether the service
 * said the tail ended: a WebSocket says so in its close code, a live NDJSON body cannot
 * (it is delimited by the connection's close, so a cut reads as an end; `tail.ts` decides
 * from the lines).
 */
import type { components } from './openapi.ts';
import type { Fetch } from './transport.ts';

export type TailLine = components['schemas']['TailLine'];

/** Where one connection of a tail reads: its URL (with `from` and `to`) and its token. */
export interface LineRequest {
  readonly url: URL;
  readonly token: string;
  readonly signal: AbortSignal;
}

/** The connection ended without the service ending the tail. */
export class TailDisconnected extends Error {
  override readonly name = 'TailDisconnected';
}

function parseLine(line: string): TailLine {
  return JSON.parse(line) as TailLine;
}

/** `GET /sessions/{id}/events` as JSON lines (`application/jsonstream`). */
export async function* ndjsonLines(
  fetch: Fetch,
  request: LineRequest,
): AsyncGenerator<TailLine, boolean> {
  const response = await fetch(
    new Request(request.url, {
      headers: { authorization: `Bearer ${request.token}`, accept: 'application/jsonstream' },
      signal: request.signal,
    }),
  );
  if (response.body === null) throw new TailDisconnected('the tail answered no body');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  // The Request follows `signal` through a weak reference (undici), so once the answer is
  // here an abort may no longer reach the body: the reader is cancelled by hand.
  const cancel = (): void => {
    reader.cancel(request.signal.reason).catch(() => undefined);
  };
  request.signal.addEventListener('abort', cancel, { once: true });
  let buffered = '';
  try {
    for (;;) {
      // A reset or a cut mid-body rejects here (a chunked body must end with its last chunk).
      const { done, value } = await reader.read();
      if (done) break;
      const lines = (buffered + value).split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') yield parseLine(line);
    }
  } finally {
    request.signal.removeEventListener('abort', cancel);
    await reader.cancel().catch(() => undefined);
  }
  if (request.signal.aborted) throw request.signal.reason;
  if (buffered.trim() !== '') throw new TailDisconnected('the tail ended mid-line');
  return false;
}

/** Close codes after which the service ended the tail for good (1000 ended, 1008 expired). */
const FINAL_CLOSES = new Set([1000, 1008]);

/**
 * The same tail over a WebSocket at the same path, one text message per line. The token
 * travels as the `bearer` subprotocol, which browsers can send (no headers there).
 */
export async function* webSocketLines(
  Socket: typeof WebSocket,
  request: LineRequest,
): AsyncGenerator<TailLine, boolean> {
  const url = new URL(request.url);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new Socket(url, ['bearer', request.token]);
  // Lines not read yet: `queue` from `head` (a shift per line would copy the rest each
  // time, and a fast tail queues thousands).
  let queue: string[] = [];
  let head = 0;
  let closed: { code: number } | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  socket.addEventListener('message', (event: MessageEvent) => {
    if (typeof event.data === 'string') queue.push(event.data);
    notify();
  });
  socket.addEventListener('close', (event: CloseEvent) => {
    closed = { code: event.code };
    notify();
  });
  // An error is followed by a close; the close decides.
  socket.addEventListener('error', () => undefined);
  const abort = (): void => {
    socket.close(1000);
  };
  request.signal.addEventListener('abort', abort, { once: true });
  try {
    for (;;) {
      if (head < queue.length) {
        const next = queue[head] ?? '';
        head += 1;
        yield parseLine(next);
        continue;
      }
      queue = [];
      head = 0;
      if (closed !== undefined) {
        if (FINAL_CLOSES.has(closed.code)) return true;
        throw new TailDisconnected(`the WebSocket closed with ${closed.code}`);
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    request.signal.removeEventListener('abort', abort);
    if (socket.readyState === socket.CONNECTING || socket.readyState === socket.OPEN)
      socket.close(1000);
  }
}
