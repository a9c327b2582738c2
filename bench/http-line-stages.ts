/**
 * The line stages of the bench server's stage timings (`http-stages.ts`): what happens to
 * a landed record's line between its tail taking it and its bytes leaving for each reader,
 * timed from outside the tails' code, on ours and on the bare broadcast alike.
 *
 * - take: one tail's taking of one record, a call per tail and record. Ours: the store
 *   handing the record to the tail (`TailOptions.deliver`): its face, the line's text and
 *   bytes (made once per record and shared by the tails that show it the same, so the
 *   record's first tail pays for them) and its frame queued on the connection. Bare: the
 *   write of the line's bytes, encoded once per record, to that tail.
 * - held: how long a connection's queued bytes waited to be written, from the cork that
 *   began a batch (ours paces, `src/http/tails/pacer.ts`; Node corks an HTTP response for
 *   the rest of its tick; `ws` corks a frame's two parts) to the uncork that writes it;
 *   0 for a write made straight to an uncorked connection.
 * - write: the system call(s) that hand a batch to the kernel: that uncork, or that
 *   straight write, from its call to its return.
 *
 * A tail's connection is watched from the tail's request on (`watch`): its `cork`,
 * `uncork` and `write` become its own methods that time themselves while collecting is
 * on, and call the socket's. Only tails' connections are watched, never an append's.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export const LINE_STAGES = ['take', 'held', 'write'] as const;
export type LineStage = (typeof LINE_STAGES)[number];

/** Where the samples of one side go, and whether they are being collected. */
export interface LineSamples {
  collecting(): boolean;
  push(stage: LineStage, ms: number): void;
}

/**
 * Times the batches written to `socket`, a tail's connection, into `samples`. Once per
 * socket: a connection that serves several requests in turn is watched by the first.
 */
export function watchTailSocket(socket: Socket, samples: LineSamples): void {
  if (WATCHED.has(socket)) return;
  WATCHED.add(socket);
  const cork = socket.cork.bind(socket);
  const uncork = socket.uncork.bind(socket);
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  /** When the batch now queued began, if it began while collecting. */
  let corkedAt: number | undefined;
  socket.cork = () => {
    if (socket.writableCorked === 0)
      corkedAt = samples.collecting() ? performance.now() : undefined;
    cork();
  };
  socket.uncork = () => {
    const began = corkedAt;
    // Only the last uncork writes; one with nothing queued writes nothing.
    if (socket.writableCorked !== 1 || socket.writableLength === 0 || began === undefined) {
      uncork();
      return;
    }
    corkedAt = undefined;
    const flushing = performance.now();
    uncork();
    if (!samples.collecting()) return;
    samples.push('held', flushing - began);
    samples.push('write', performance.now() - flushing);
  };
  socket.write = (...args: unknown[]) => {
    if (socket.writableCorked !== 0 || !samples.collecting()) return write(...args);
    const writing = performance.now();
    const result = write(...args);
    samples.push('held', 0);
    samples.push('write', performance.now() - writing);
    return result;
  };
}

const WATCHED = new WeakSet<Socket>();

/** `take` wrapped in the timing of its calls as the `take` stage of `samples`. */
export function timedTake<Args extends unknown[], Result>(
  take: (...args: Args) => Result,
  samples: LineSamples,
): (...args: Args) => Result {
  return (...args) => {
    if (!samples.collecting()) return take(...args);
    const taking = performance.now();
    const result = take(...args);
    samples.push('take', performance.now() - taking);
    return result;
  };
}
