/**
 * The HTTP calls `npm run bench:turns` makes, the way a user reaches agent turns (the flow
 * of `test/turns/turn-client.ts`, which asserts with vitest and so stays out of the
 * bench): the operator grant mints an owner's console token, the owner creates a tenant
 * and an inference option on the `simulated` provider, a vendor proposes, the owner
 * consents, the vendor polls its install key, the install opens sessions, and a
 * principal appends messages. Every call checks its status and throws with the answer
 * otherwise: a bench that goes on after a refused call prints figures of nothing.
 *
 * Appends go through `node:http` with a keep-alive agent sized by the caller (one socket
 * per concurrent writer), not `fetch`: on a two-core machine the load generator's own
 * CPU is taken from the service, so the client is kept light.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';

/** A session opened through `POST /sessions`. */
export interface BenchSession {
  readonly id: string;
  readonly token: string;
}

/** An install made by consent, and the tenant it belongs to. */
export interface BenchInstall {
  readonly key: string;
  readonly tenant: string;
}

/** Sessions opened at once by `openSessions`. */
const OPEN_PARALLEL = 32;

/** A small vendor document with one tool, fresh per call (a name is unique per tenant). */
function vendorDocument(): Record<string, unknown> {
  return {
    appdoc: 1,
    name: `Bench ${randomUUID().slice(0, 8)}`,
    description: 'Benchmarks agent turns.',
    tools: [
      {
        name: 'lookup_order',
        description: 'Look an order up.',
        input_schema: { type: 'object', properties: { order_id: { type: 'string' } } },
        output_schema: { type: 'object' },
      },
    ],
  };
}

/** A principal's `message.submitted` as one offered record. */
export function messageBody(text: string): string {
  return JSON.stringify([{ kind: { name: 'message.submitted', version: 1 }, body: { text } }]);
}

/**
 * POSTs `body` through `agent` and answers the status; rejects on a connection error. The
 * answer's bytes are read and dropped.
 */
export function post(
  agent: http.Agent,
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json' } },
      (response) => {
        response.resume();
        response.once('end', () => {
          resolve(response.statusCode ?? 0);
        });
        response.once('error', reject);
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

/** The service as one user (operator, owner, vendor, install, principals) calls it. */
export class TurnsClient {
  readonly base: string;
  readonly #operator: string;
  readonly #agent: http.Agent;

  /** `sockets`: keep-alive connections for appends, one per concurrent writer. */
  constructor(base: string, operatorToken: string, sockets: number) {
    this.base = base;
    this.#operator = operatorToken;
    this.#agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  }

  /** Sends a JSON request; answers the parsed body when the status is `expected`. */
  async call(
    expected: readonly number[],
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
  ): Promise<unknown> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!expected.includes(response.status)) {
      throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    }
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  /**
   * A fresh tenant, its `simulated` inference option `fast`, and an install of a fresh
   * vendor document consented to with it.
   */
  async install(): Promise<BenchInstall> {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const { token } = (await this.call([200], 'POST', '/console/token', this.#operator, {
      user: `u-${randomUUID()}`,
      tenant,
    })) as { token: string };
    await this.call([201], 'PUT', '/console/tenant', token, { name: 'Turn bench' });
    await this.call([200, 201], 'PUT', '/inferences/fast', token, { provider: 'simulated' });
    const proposal = (await this.call([201], 'POST', '/appdoc', null, vendorDocument())) as {
      request: string;
      poll_secret: string;
    };
    await this.call([200], 'POST', `/consent/${proposal.request}`, token, { inference: 'fast' });
    const receipt = (await this.call([200], 'POST', '/consent/token', proposal.poll_secret, {
      request: proposal.request,
    })) as { key: string };
    return { key: receipt.key, tenant };
  }

  /** Opens `count` sessions with the install key, OPEN_PARALLEL at a time. */
  async openSessions(key: string, count: number): Promise<BenchSession[]> {
    const sessions: BenchSession[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const opened = (await this.call([201], 'POST', `/sessions?principal=p-${i}`, key)) as {
          session: string;
          token: string;
        };
        sessions.push({ id: opened.session, token: opened.token });
      }
    };
    await Promise.all(Array.from({ length: Math.min(OPEN_PARALLEL, count) }, worker));
    return sessions;
  }

  /** A principal's message; rejects unless it landed (200). */
  async send(session: BenchSession, text: string): Promise<void> {
    const status = await post(
      this.#agent,
      `${this.base}/sessions/${session.id}/events`,
      { authorization: `Bearer ${session.token}`, 'idempotency-key': randomUUID() },
      messageBody(text),
    );
    if (status !== 200) throw new Error(`the append to ${session.id} answered ${status}`);
  }

  /** `GET /sessions/{id}/status` (2.10) as the principal: what a failure reports. */
  async status(session: BenchSession): Promise<unknown> {
    return this.call([200], 'GET', `/sessions/${session.id}/status`, session.token);
  }

  /** Closes the keep-alive connections. */
  close(): void {
    this.#agent.destroy();
  }
}
