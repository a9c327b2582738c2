/**
 * The client side of `npm run bench`'s memory part (`http-memory.ts`): sessions opened
 * and appended to through the service's routes, PARALLEL requests at a time over
 * keep-alive connections, and a WebSocket tail on each session that counts its lines.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { openTail, type BenchSession, type Paths } from './http-tail-client.ts';

/** Requests in flight at once. */
export const PARALLEL = 32;
const TAIL_CHUNK = 100;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The keep-alive connections of the part's requests; destroyed when it ends. */
export const agent = new http.Agent({ keepAlive: true, maxSockets: PARALLEL });

let keys = 0;

/**
 * POSTs and answers the parsed body; throws unless the status is `expected`. Each
 * request has an `Idempotency-Key` of its own (a token without one writes one batch).
 */
function post(url: string, token: string, body: string, expected: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'idempotency-key': `memory-${++keys}`,
          ...(body === '' ? {} : { 'content-type': 'application/json' }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (response.statusCode === expected) resolve(JSON.parse(text) as unknown);
          else reject(new Error(`POST ${url} answered ${response.statusCode}: ${text}`));
        });
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

/** Runs `work(i)` for i in [0, count), PARALLEL at a time. */
export async function parallel(count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) await work(i);
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

export async function openSessions(
  paths: Paths,
  key: string,
  count: number,
): Promise<BenchSession[]> {
  const sessions: BenchSession[] = [];
  await parallel(count, async (i) => {
    const opened = (await post(`${paths.base}/sessions?principal=m-${i}`, key, '', 201)) as {
      session: string;
      token: string;
    };
    sessions[i] = { id: opened.session, token: opened.token, next: 2 };
  });
  return sessions;
}

/** One principal's message, its text starting with its send time (what tails scan for). */
const message = () =>
  JSON.stringify([
    { kind: { name: 'message.submitted', version: 1 }, body: { text: `${performance.now()} m` } },
  ]);

/** One record to `session` (none when there is no session at that index). */
export async function appendTo(paths: Paths, session: BenchSession | undefined): Promise<void> {
  if (session !== undefined) await appendOne(paths, session);
}

/** One record to `session`. */
async function appendOne(paths: Paths, session: BenchSession): Promise<void> {
  await post(`${paths.base}${paths.append(session)}`, session.token, message(), 200);
}

/** A WebSocket tail on each of some sessions, and how many lines they received. */
export class Tails {
  seen = 0;
  readonly #closers: (() => void)[] = [];

  static async open(paths: Paths, sessions: readonly BenchSession[]): Promise<Tails> {
    const tails = new Tails();
    for (let i = 0; i < sessions.length; i += TAIL_CHUNK) {
      const chunk = sessions.slice(i, i + TAIL_CHUNK);
      const opened = await Promise.all(
        chunk.map((session) => openTail(paths, 'websocket', session, () => (tails.seen += 1))),
      );
      tails.#closers.push(...opened);
    }
    return tails;
  }

  /** Appends one record to each session; resolves once the tails received them all. */
  async appendToEach(paths: Paths, sessions: readonly BenchSession[]): Promise<void> {
    const expected = this.seen + sessions.length;
    await parallel(sessions.length, (i) => appendTo(paths, sessions[i]));
    const deadline = performance.now() + 60_000;
    while (this.seen < expected && performance.now() < deadline) await pause(20);
    if (this.seen < expected) {
      throw new Error(`the tails received ${this.seen} of ${expected} records`);
    }
  }

  close(): void {
    for (const close of this.#closers.splice(0)) close();
  }
}
