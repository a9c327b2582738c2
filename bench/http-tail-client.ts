/**
 * The tail clients of `npm run bench` (`http-tails.ts`): one WebSocket or NDJSON tail of a
 * session, on the app or on the bare baseline, that hears the send time of every record
 * delivered to it. Each record's text starts with its send time and a space, so the
 * client scans for that instead of parsing lines, to keep the load generator light.
 */
import net from 'node:net';
import { WebSocket } from 'ws';

/** A session opened through `POST /sessions`, and the cursor its next record lands at. */
export interface BenchSession {
  readonly id: string;
  readonly token: string;
  next: number;
}

export type Transport = 'websocket' | 'ndjson';

/** Where a server takes the appends and serves the tails of a session. */
export interface Paths {
  readonly name: 'ours' | 'bare';
  readonly base: string;
  append(session: BenchSession): string;
  tail(session: BenchSession): string;
}

/** The app's own routes. */
export const ourPaths = (base: string): Paths => ({
  name: 'ours',
  base,
  append: (session) => `/sessions/${session.id}/events`,
  tail: (session) => `/sessions/${session.id}/events?from=${session.next}`,
});

/** The bare baseline's routes (`http-bare.ts`), on a stream named as the session. */
export const barePaths = (base: string): Paths => ({
  name: 'bare',
  base,
  append: (session) => `/bare/${session.id}`,
  tail: (session) => `/bare/${session.id}/events`,
});

const MARK = Buffer.from('"text":"');

/** The send time a delivered line carries, or NaN when it carries none (an `Err` line). */
function sentAt(line: Buffer): number {
  const at = line.indexOf(MARK);
  return at < 0 ? Number.NaN : Number.parseFloat(line.toString('latin1', at + 8, at + 32));
}

/** How many bytes at the end of `data` could begin a marker cut off by the read's end. */
function partialMark(data: Buffer): number {
  for (let k = Math.min(MARK.length - 1, data.length); k > 0; k--) {
    if (data.subarray(data.length - k).equals(MARK.subarray(0, k))) return k;
  }
  return 0;
}

/**
 * Calls `onSent` with the send time of every record in a stream of NDJSON bytes (chunked
 * or not): each record's text starts with its send time and a space, so the client
 * scans for that instead of parsing lines. A marker or time cut off at the end of a read
 * is kept for the next one.
 */
function sendTimes(onSent: (sent: number) => void): (data: Buffer) => void {
  let rest: Buffer = Buffer.alloc(0);
  return (chunk) => {
    const data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    let at = data.indexOf(MARK);
    let from = data.length - partialMark(data);
    while (at >= 0) {
      const end = data.indexOf(0x20, at + MARK.length);
      if (end < 0) {
        from = at;
        break;
      }
      onSent(Number.parseFloat(data.toString('latin1', at + MARK.length, end)));
      at = data.indexOf(MARK, end);
    }
    rest = from >= data.length ? Buffer.alloc(0) : data.subarray(from);
  };
}

/**
 * Opens one tail; `onSent` hears the send time of every record delivered; resolves with a
 * closer once attached. The NDJSON tail is read from a plain TCP connection: the request
 * is written by hand and the answer checked for 200, and then its bytes are scanned
 * (`sendTimes`), so the client's share of the machine goes to reading, not to an HTTP
 * parser's event per line.
 */
export function openTail(
  paths: Paths,
  transport: Transport,
  session: BenchSession,
  onSent: (sent: number) => void,
): Promise<() => void> {
  const base = paths.base;
  const path = paths.tail(session);
  if (transport === 'websocket') {
    // The client reads only the send time out of each message: it skips ws's UTF-8
    // check of every message, which the server's JSON text never fails.
    const socket = new WebSocket(`${base.replace('http', 'ws')}${path}`, {
      headers: { authorization: `Bearer ${session.token}` },
      perMessageDeflate: false,
      skipUTF8Validation: true,
    });
    socket.on('message', (message: Buffer) => {
      const sent = sentAt(message);
      if (!Number.isNaN(sent)) onSent(sent);
    });
    return new Promise((resolve, reject) => {
      socket.once('open', () => {
        resolve(() => {
          socket.terminate();
        });
      });
      socket.once('error', reject);
    });
  }
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    socket.on('error', reject);
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${session.token}\r\n` +
        'Connection: close\r\n\r\n',
    );
    const scan = sendTimes(onSent);
    let head: Buffer = Buffer.alloc(0);
    const onHead = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = head.toString('latin1', 0, head.indexOf('\r\n'));
      if (!status.startsWith('HTTP/1.1 200 ')) {
        reject(new Error(`tail answered ${status}`));
        socket.destroy();
        return;
      }
      socket.off('data', onHead);
      socket.on('data', scan);
      scan(head.subarray(end + 4));
      resolve(() => socket.destroy());
    };
    socket.on('data', onHead);
  });
}
