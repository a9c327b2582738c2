/**
 * Write pacing for tails: a connection's writes are corked and written together, at most
 * once per `windowMs`, and at once when the connection has been quiet that long.
 *
 * Every write to a loopback or LAN socket is a system call that also runs the receiver's
 * side of TCP, and on the far end a read: for a session with a thousand tails, a record
 * is a thousand of each (`npm run bench`). A tail that receives records faster than one
 * per window gets them a few at a time instead: at most `windowMs` later than unpaced,
 * in the same order, the same bytes, each WebSocket message still its own frame. A tail
 * that receives less than one record per window is written to at the end of the tick,
 * as Node's HTTP responses are, with no delay at all.
 */
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';

/** The longest a written line waits for its connection's next write (ms). */
export const TAIL_WINDOW_MS = 2;

/** What pacing needs of a connection. */
export type PacedWire = Pick<Socket, 'cork' | 'uncork'>;

/**
 * Returns `hold`, to be called before each write to `wire`: the first write of a batch
 * corks the connection and schedules its flush, at the end of the tick when the last
 * flush is `windowMs` old, else when it will be. Without a wire, `hold` does nothing.
 * `now` is the clock in ms (monotonic; tests drive it by hand).
 */
export function pacer(
  wire: PacedWire | undefined,
  windowMs = TAIL_WINDOW_MS,
  now: () => number = () => performance.now(),
): () => void {
  if (wire === undefined) return () => undefined;
  let corked = false;
  let flushed = Number.NEGATIVE_INFINITY;
  const flush = (): void => {
    corked = false;
    flushed = now();
    wire.uncork();
  };
  return () => {
    if (corked) return;
    corked = true;
    wire.cork();
    const wait = flushed + windowMs - now();
    if (wait <= 0) process.nextTick(flush);
    else setTimeout(flush, wait);
  };
}
