/**
 * The calls a user makes to run agent turns, over real HTTP against any running service
 * (an in-process test app listening on port 0, or `node src/main.ts` in a child process):
 * a tenant owner signs in with the operator grant, creates an inference option, consents
 * to a vendor's proposal (which the vendor polls for its install key), the install opens
 * sessions, a principal sends messages and cancels turns, and everyone reads the log
 * through the session's NDJSON tail. Nothing is written into a store.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from '../support/app.ts';
import { fetched, PublicFlow, type Owner } from '../support/flow.ts';

/** A landed record as the principal's tail serves it. */
export interface TailRecord {
  readonly envelope: {
    readonly cursor: number;
    readonly at: number;
    readonly kind: { readonly name: string; readonly version: number };
    readonly producer: string;
    readonly idem: string | null;
    readonly to: string | null;
    readonly size: number;
  };
  readonly body: Record<string, unknown>;
}

export interface OpenedSession {
  readonly session: string;
  readonly token: string;
}

export type { Owner };

/** Names of the records of a log, in order. */
export const kinds = (records: readonly TailRecord[]): string[] =>
  records.map((r) => r.envelope.kind.name);

export class TurnClient {
  readonly base: string;
  /** The owner's and the vendor's calls (sign-in, options, proposals, consent). */
  readonly flow: PublicFlow;

  constructor(base: string, operatorToken: string) {
    this.base = base.replace(/\/+$/, '');
    this.flow = new PublicFlow(fetched(this.base), operatorToken);
  }

  /** Sends a JSON request; answers status and parsed body. */
  async call(
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...headers,
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  }

  async #ok(
    expected: number,
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
  ): Promise<unknown> {
    const answer = await this.call(method, path, token, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(expected);
    return answer.body;
  }

  /** A fresh tenant and its owner's console token (operator grant, decisions row 73). */
  owner(): Promise<Owner> {
    return this.flow.owner('Turn tests');
  }

  /**
   * An install through the public flow: the owner's inference option `fast` (2.13, with
   * `option` over the defaults), a proposal, the owner's consent, the vendor's poll.
   */
  async install(
    option: Record<string, unknown> = {},
    owner?: Owner,
    consent: Record<string, unknown> = {},
  ): Promise<{ key: string; install: string; owner: Owner }> {
    const who = owner ?? (await this.owner());
    await this.call('PUT', '/inferences/fast', who.token, { provider: 'simulated', ...option });
    const made = await this.flow.install({
      owner: who,
      vendor: vendorDocument(),
      config: { inference: 'fast', ...consent },
    });
    return { key: made.key, install: made.id, owner: who };
  }

  /** `POST /sessions` for principal `ada`. */
  async open(key: string, body: Record<string, unknown> = {}): Promise<OpenedSession> {
    return (await this.#ok(201, 'POST', '/sessions?principal=ada', key, body)) as OpenedSession;
  }

  /** A principal's `message.submitted`; answers its cursor. */
  async send(opened: OpenedSession, text: string): Promise<number> {
    return this.#append(opened, {
      kind: { name: 'message.submitted', version: 1 },
      body: { text },
    });
  }

  /** A principal's `turn.cancel`; answers its cursor. */
  async cancel(opened: OpenedSession, turn: number | null = null): Promise<number> {
    return this.#append(opened, { kind: { name: 'turn.cancel', version: 1 }, body: { turn } });
  }

  async #append(opened: OpenedSession, record: unknown): Promise<number> {
    const answer = await this.call(
      'POST',
      `/sessions/${opened.session}/events`,
      opened.token,
      [record],
      {
        'idempotency-key': randomUUID(),
      },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return (answer.body as { cursor: number }[])[0]?.cursor ?? 0;
  }

  /** `GET /sessions/{id}/status` (2.10). */
  async status(opened: OpenedSession): Promise<{
    archived: boolean;
    head: number;
    live: {
      phase: string;
      turn: number | null;
      round: number | null;
      since: number;
      prompt_tokens: number;
      pending: { cursor: number; call: string; tool: string }[];
    };
  }> {
    return (await this.#ok(
      200,
      'GET',
      `/sessions/${opened.session}/status`,
      opened.token,
    )) as never;
  }

  /** Every record the principal's tail shows, from cursor 1 to the head. */
  async log(opened: OpenedSession): Promise<TailRecord[]> {
    const { head } = await this.status(opened);
    const response = await fetch(
      `${this.base}/sessions/${opened.session}/events?from=1&to=${head + 1}`,
      {
        headers: { authorization: `Bearer ${opened.token}` },
      },
    );
    expect(response.status).toBe(200);
    const lines = (await response.text()).split('\n').filter((line) => line !== '');
    return lines.map((line) => (JSON.parse(line) as { Ok: TailRecord }).Ok);
  }

  /** Polls the log until `done` holds (or fails after `timeoutMs`); answers the log. */
  async until(
    opened: OpenedSession,
    done: (records: TailRecord[]) => boolean,
    timeoutMs = 10_000,
  ): Promise<TailRecord[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const records = await this.log(opened);
      if (done(records)) return records;
      if (Date.now() > deadline) {
        throw new Error(
          `the log did not get there in ${timeoutMs} ms: ${kinds(records).join(', ')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Waits until `count` turns have ended; answers the log. */
  turnsEnded(opened: OpenedSession, count: number, timeoutMs?: number): Promise<TailRecord[]> {
    return this.until(
      opened,
      (records) => kinds(records).filter((k) => k === 'turn.ended').length >= count,
      timeoutMs,
    );
  }

  /** `POST /sessions/{id}/archive` with the install key. */
  async archive(key: string, opened: OpenedSession): Promise<void> {
    await this.#ok(200, 'POST', `/sessions/${opened.session}/archive`, key);
  }

  /** `GET /usage` for today (UTC) as the owner. */
  /** `GET /usage` for one UTC day (today by default). */
  async usage(
    owner: Owner,
    day = new Date().toISOString().slice(0, 10),
  ): Promise<Record<string, unknown>[]> {
    return (await this.#ok(200, 'GET', `/usage?from=${day}&to=${day}`, owner.token)) as never;
  }

  /** The owner's opened audit of an archived session (§4.3): every record, layers opened. */
  async audit(owner: Owner, opened: OpenedSession): Promise<TailRecord[]> {
    const response = await fetch(
      `${this.base}/console/sessions/${opened.session}/events?opened=1`,
      {
        headers: { authorization: `Bearer ${owner.token}` },
      },
    );
    expect(response.status, await response.clone().text()).toBe(200);
    const lines = (await response.text()).split('\n').filter((line) => line !== '');
    return lines.map((line) => (JSON.parse(line) as { Ok: TailRecord }).Ok);
  }

  /**
   * Polls `GET /usage` for `day` until its row satisfies `done` (counting is asynchronous:
   * the driver checkpoints after the records land); answers the last row read.
   */
  async usageWhen(
    owner: Owner,
    done: (row: Record<string, unknown>) => boolean,
    day?: string,
    timeoutMs = 5000,
  ): Promise<Record<string, unknown> | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await this.usage(owner, day);
      if ((row !== undefined && done(row)) || Date.now() >= deadline) return row;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The owner signed in again (a fresh console token for the same user and tenant). */
  signIn(owner: Owner): Promise<Owner> {
    return this.flow.signIn(owner.user, owner.tenant);
  }
}

/** `harness`'s app listening on loopback, and a client of it with the operator grant. */
export async function listeningClient(harness: TestApp): Promise<TurnClient> {
  const base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  return new TurnClient(base, harness.keys.generatedOperatorToken ?? '');
}

/** A vendor document with one tool, fresh per call. */
export function vendorDocument(): Record<string, unknown> {
  return {
    appdoc: 1,
    name: `Orders ${randomUUID().slice(0, 8)}`,
    description: 'Looks orders up.',
    tools: [
      {
        name: 'lookup_order',
        description: 'Look an order up.',
        input_schema: { type: 'object', properties: { order_id: { type: 'string' } } },
        output_schema: { type: 'object' },
      },
      {
        name: 'refund',
        description: 'Refund an amount.',
        input_schema: {
          type: 'object',
          properties: { amount: { type: 'number' }, reason: { type: 'string' } },
          required: ['amount'],
        },
        output_schema: { type: 'object' },
        timeout: '1s',
      },
    ],
  };
}
