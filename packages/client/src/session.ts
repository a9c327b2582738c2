/**
 * One session as a token holder sees it: appends that are safe to retry, tails that
 * resume, and the session's status.
 */
import { appendOnce, type AppendOptions, type Envelope, type OfferedRecord } from './append.ts';
import type { ClientCore } from './core.ts';
import type { components } from './openapi.ts';
import { tail, type LandedRecord, type TailEnd, type TailOptions } from './tail.ts';

export type SessionStatus = components['schemas']['SessionStatus'];

/** Appends, tails and status of one session with one session token. */
export class SessionClient {
  readonly #client: ClientCore;
  /** The session id (72 hex characters). */
  readonly id: string;
  /** The session token every call sends. */
  readonly token: string;

  constructor(client: ClientCore, id: string, token: string) {
    this.#client = client;
    this.id = id;
    this.token = token;
  }

  /**
   * Lands `records` atomically, with an `Idempotency-Key`; a lost answer is resent with
   * the same key, so the batch lands once. Answers the landed envelopes.
   */
  append(records: readonly OfferedRecord[], options: AppendOptions = {}): Promise<Envelope[]> {
    const client = this.#client;
    return appendOnce(client.api, client.retry, this, records, options);
  }

  /**
   * The session's records from `options.from` (1 by default) as an async iterable, each
   * once and in cursor order across reconnects; see `TailOptions` for how it ends.
   */
  tail(options: TailOptions = {}): AsyncGenerator<LandedRecord, TailEnd> {
    const client = this.#client;
    return tail(
      {
        baseUrl: client.options.baseUrl.replace(/\/+$/, ''),
        session: this.id,
        token: this.token,
        fetch: client.fetch,
        retry: client.retry,
        WebSocket: client.options.WebSocket,
      },
      options,
    );
  }

  /** `GET /sessions/{id}/status`: archived, head cursor and the live turn. */
  async status(): Promise<SessionStatus> {
    const { data, response } = await this.#client.api.GET('/sessions/{id}/status', {
      params: { path: { id: this.id } },
      headers: { authorization: `Bearer ${this.token}` },
    });
    if (data === undefined) throw new Error(`the status answered ${response.status} empty`);
    return data;
  }
}
