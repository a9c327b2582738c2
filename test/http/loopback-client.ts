/**
 * Real HTTP requests from a loopback address of the test's own (`127.a.b.c`; Linux routes
 * the whole 127/8 to the loopback interface). The service keys requests without a
 * verified credential by their address, and with Redis the counts are shared with every
 * other suite on the machine that uses it: a random source address keeps a test's
 * address buckets its own.
 */
import { randomInt } from 'node:crypto';
import http from 'node:http';

export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: unknown;
}

export interface RequestOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A loopback address no other test is likely to send from. */
export function randomLoopback(): string {
  return `127.${String(randomInt(1, 255))}.${String(randomInt(0, 256))}.${String(randomInt(1, 255))}`;
}

export class LoopbackClient {
  readonly address: string;
  readonly #base: URL;
  readonly #agent: http.Agent;

  /** A client of the service at `base`, sending from `address`. */
  constructor(base: string, address = randomLoopback()) {
    this.address = address;
    this.#base = new URL(base);
    this.#agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  }

  /** One request; answers its status, headers and JSON body (or text when not JSON). */
  request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: this.#base.hostname,
          port: this.#base.port,
          path,
          method,
          agent: this.#agent,
          localAddress: this.address,
          headers: {
            ...options.headers,
            ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = text === '' ? undefined : (JSON.parse(text) as unknown);
            } catch {
              // not JSON: kept as text
            }
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  }

  /** Sends `count` requests made by `make`, `concurrency` at a time; answers them in order. */
  async many(
    count: number,
    concurrency: number,
    make: (i: number) => Promise<Answer>,
  ): Promise<Answer[]> {
    const answers: Answer[] = new Array<Answer>(count);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const i = next;
        next += 1;
        answers[i] = await make(i);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return answers;
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** How many answers had each status. */
export function countStatuses(answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
