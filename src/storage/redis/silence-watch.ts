/**
 * The answer deadline of a Redis connection, kept per connection rather than per command.
 *
 * ioredis's `commandTimeout` arms a timer for every command and, once it is answered,
 * clears it and deletes the timer's property from the command, which leaves each command
 * a slow dictionary-mode object: on one-record appends (two commands each, the rate
 * limit's count and the append) the two clients' timers cost about 7% of the service's
 * CPU per record (`npm run bench`, two runs against two). What the deadline is for is a
 * link that went silent, and that is a property of the connection: here one timer per
 * connection looks, a few times per deadline, whether commands are waiting and nothing at
 * all has been read from the socket since it last looked. After `limitMs` of that, the
 * socket is destroyed: every command in flight on it fails at once
 * (`maxRetriesPerRequest: 0`, `client.ts`; read as `Unavailable` by `failures.ts`), and
 * the client reconnects. A command thus fails between `limitMs` and `limitMs` plus a
 * fifth of it after the connection last said anything, where `commandTimeout` counted
 * from the command's own write; a busy server that keeps answering other commands is
 * never cut.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';

/** Looks this many times per deadline. */
const LOOKS_PER_LIMIT = 5;

/** Destroys `client`'s socket once commands have waited `limitMs` on it with nothing read. */
export function watchSilence(client: Redis, limitMs: number): void {
  let socket: Socket | undefined;
  let read = 0;
  let since = 0;
  const look = (): void => {
    if (client.status === 'end') {
      clearInterval(timer);
      return;
    }
    const stream = client.stream as Socket | undefined;
    if (client.status !== 'ready' || stream === undefined || client.commandQueue.length === 0) {
      socket = undefined;
      return;
    }
    const now = performance.now();
    if (stream !== socket || stream.bytesRead !== read) {
      socket = stream;
      read = stream.bytesRead;
      since = now;
    } else if (now - since >= limitMs) {
      socket = undefined;
      stream.destroy(new Error(`Redis answered nothing for ${limitMs} ms while commands waited`));
    }
  };
  const timer = setInterval(look, Math.max(1, Math.floor(limitMs / LOOKS_PER_LIMIT)));
  timer.unref();
}
