/**
 * One session tail of `npm run soak`, over NDJSON (`GET /sessions/{id}/events`) or over
 * WebSocket at the same path (interface 4.2): every line parsed and counted, each
 * `turn.ended` handed to whoever waits for the turn after a given cursor, and the end of
 * the tail told apart: after `session.archived` it is expected, otherwise it is a failure
 * (an `Err` line, a line that is not JSON, a tail the service cut) that the soak counts.
 */
import http from 'node:http';
import { WebSocket } from 'ws';

export type Transport = 'ndjson' | 'websocket';

interface TailLine {
  readonly Ok?: {
    readonly envelope: { readonly cursor: number; readonly kind: { readonly name: string } };
    readonly body: Record<string, unknown>;
  };
  readonly Err?: unknown;
}

/** `turn.ended` records a tail remembers for waiters that come after them. */
const ENDINGS = 8;

interface Waiter {
  /** The turn that ends after this cursor (the message that started it). */
  readonly after: number;
  readonly resolve: (reason: string) => void;
  readonly reject: (error: Error) => void;
}

export interface TailSession {
  readonly id: string;
  readonly token: string;
}

/** A tail open until `close`, or until its session is archived. */
export class SoakTail {
  readonly transport: Transport;
  /** Records seen. */
  records = 0;
  /** Why the tail stopped being trustworthy, once it did. */
  failure: Error | null = null;
  /** Resolves once the tail ended, by `close`, after `session.archived` or by a failure. */
  readonly done: Promise<void>;
  #archived = false;
  #closed = false;
  #rest = '';
  #waiters: Waiter[] = [];
  /** The last `turn.ended` records seen, oldest first. */
  readonly #endings: { readonly cursor: number; readonly reason: string }[] = [];
  #stop: () => void = () => undefined;
  #finish: () => void = () => undefined;

  private constructor(transport: Transport) {
    this.transport = transport;
    this.done = new Promise((resolve) => {
      this.#finish = resolve;
    });
  }

  /** Opens the tail from cursor `from`; resolves once the service accepted it. */
  static open(
    base: string,
    session: TailSession,
    from: number,
    transport: Transport,
  ): Promise<SoakTail> {
    const tail = new SoakTail(transport);
    const path = `/sessions/${session.id}/events?from=${from}`;
    const headers = { authorization: `Bearer ${session.token}` };
    return new Promise((resolve, reject) => {
      if (transport === 'websocket') {
        const socket = new WebSocket(`${base.replace(/^http/, 'ws')}${path}`, { headers });
        tail.#stop = () => {
          socket.terminate();
        };
        socket.once('open', () => {
          resolve(tail);
        });
        socket.once('unexpected-response', (_request, response) => {
          reject(new Error(`the WebSocket tail answered ${response.statusCode}`));
        });
        socket.on('message', (data: Buffer) => {
          tail.#line(data.toString('utf8'));
        });
        socket.once('close', (code) => {
          tail.#ended(code === 1000 ? null : new Error(`the WebSocket tail closed ${code}`));
        });
        socket.once('error', (error) => {
          reject(error);
          tail.#ended(error);
        });
        return;
      }
      const request = http.get(`${base}${path}`, { agent: false, headers }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`the NDJSON tail answered ${response.statusCode}`));
          return;
        }
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const lines = (tail.#rest + chunk).split('\n');
          tail.#rest = lines.pop() ?? '';
          for (const line of lines) if (line !== '') tail.#line(line);
        });
        response.once('end', () => {
          tail.#ended(null);
        });
        response.once('error', (error) => {
          tail.#ended(error);
        });
        resolve(tail);
      });
      tail.#stop = () => {
        request.destroy();
      };
      request.once('error', (error) => {
        reject(error);
        tail.#ended(error);
      });
    });
  }

  /**
   * Resolves with the reason of the first `turn.ended` after cursor `after`, which may
   * have come already (the tail can outrun the append's answer).
   */
  turnEnded(after: number): Promise<string> {
    const seen = this.#endings.find((ending) => ending.cursor > after);
    if (seen !== undefined) return Promise.resolve(seen.reason);
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.#waiters.push({ after, resolve, reject });
    });
  }

  /** Ends the tail from this side. */
  close(): void {
    this.#closed = true;
    this.#stop();
    this.#ended(null);
  }

  #line(text: string): void {
    let line: TailLine;
    try {
      line = JSON.parse(text) as TailLine;
    } catch {
      this.#ended(new Error(`the ${this.transport} tail sent a line that is not JSON`));
      return;
    }
    if (line.Ok === undefined) {
      this.#ended(new Error(`the ${this.transport} tail sent ${text.slice(0, 200)}`));
      return;
    }
    this.records += 1;
    const { cursor, kind } = line.Ok.envelope;
    if (kind.name === 'session.archived') this.#archived = true;
    if (kind.name !== 'turn.ended') return;
    const reason = String(line.Ok.body.reason);
    this.#endings.push({ cursor, reason });
    if (this.#endings.length > ENDINGS) this.#endings.shift();
    this.#waiters = this.#waiters.filter((waiter) => {
      if (waiter.after >= cursor) return true;
      waiter.resolve(reason);
      return false;
    });
  }

  /** The tail ended: a failure unless it was closed here or its session was archived. */
  #ended(error: Error | null): void {
    if (!this.#closed && !this.#archived && this.failure === null) {
      this.failure = error ?? new Error(`the ${this.transport} tail ended before its session`);
    }
    const reason = this.failure ?? new Error(`the ${this.transport} tail ended`);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(reason);
    this.#finish();
  }
}
