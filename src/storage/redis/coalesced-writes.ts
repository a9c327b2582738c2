/**
 * The commands a connection is given while the event loop handles one round of I/O leave
 * in one write, each answered as soon as its reply is parsed.
 *
 * ioredis's auto-pipelining also sends a round's commands in one write, but it keeps one
 * batch in flight per connection: commands issued while a batch is out wait for that whole
 * batch to be answered before they are even sent, and every caller of a batch hears back
 * only once its last reply is in. So an append issued while a tail's catch-up read (up to
 * a few MB of records) or a busy round's batch was out waited for all of it, which showed
 * as the append's own p99 in `npm run bench`.
 *
 * Here each command is written as it is issued, into a socket corked until the event
 * loop's check phase (`setImmediate`, when auto-pipelining would have sent its batch):
 * the round's commands go out in one system call, with any number of rounds in flight, and
 * ioredis resolves each command from its own reply. Order per connection is kept, as a
 * socket writes in order.
 *
 * A round's commands stop waiting for the round's end once they hold `FLUSH_BYTES`: a
 * write that large already spreads the system call over many bytes, and holding it back
 * holds the requests that issued it, and all they have allocated, while the round goes on
 * parsing others. On appends of 100 records (about 30 KB a command) every command waited
 * for all the others the round read, and what they held outlived the young generation:
 * writing each as soon as it was issued cut the server's collection time per record by a
 * fifth and its CPU per record by a tenth (`npm run bench`, `docs/benchmarks.md`).
 * Commands of a few hundred bytes, one-record appends and head reads, still share a write.
 */
import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';

const COALESCED = Symbol('coalesced-writes');

/** Bytes a round's corked commands may hold before they are written (see above). */
export const FLUSH_BYTES = 16 * 1024;

type Coalesced = Redis & { [COALESCED]?: true };

/** Makes `client` cork its socket for the rest of each round it writes in; idempotent. */
export function coalesceWrites(client: Redis): void {
  const marked = client as Coalesced;
  if (marked[COALESCED] === true) return;
  marked[COALESCED] = true;
  const send = client.sendCommand.bind(client);
  let corked: Socket | undefined;
  const uncork = (): void => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  client.sendCommand = (command, stream) => {
    // ioredis's socket (net or TLS), replaced on every reconnection.
    const socket = (stream ?? client.stream) as Socket | undefined;
    if (corked === undefined && socket?.writable === true) {
      corked = socket;
      socket.cork();
      setImmediate(uncork);
    }
    const sent = send(command, stream);
    if (corked !== undefined && corked.writableLength >= FLUSH_BYTES) uncork();
    return sent;
  };
}
