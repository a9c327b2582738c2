/**
 * Appends that are safe to retry (decisions row 9). Every batch is sent
 * with an `Idempotency-Key`; when an attempt times out or its connection is lost, the
 * batch is sent again with the same key, so the service answers the envelopes of the
 * batch that landed instead of landing it twice. A refusal is never resent.
 */
import type { Client as FetchClient } from 'openapi-fetch';
import type { components, paths } from './openapi.ts';
import { ServiceProblem } from './problem.ts';
import { backoffMs, sleep, type RetryPolicy } from './transport.ts';

export type OfferedRecord = components['schemas']['OfferedRecord'];
export type Envelope = components['schemas']['Envelope'];

export interface AppendOptions {
  /**
   * The batch's key (1 to 255 visible ASCII characters); a fresh random one by default.
   * Keep it to resend the same batch later, e.g. after a crash of the sender.
   */
  readonly idempotencyKey?: string;
  /** Abandons the append (the batch may or may not have landed). */
  readonly signal?: AbortSignal;
  /** How long one attempt may wait for its answer before it is resent, in ms; 10 s. */
  readonly timeoutMs?: number;
  /** Resends after a timeout or a lost connection; 4 by default. */
  readonly resends?: number;
}

/** Whether `error` says the answer was lost (a timeout or a broken connection). */
function isLostAnswer(error: unknown): boolean {
  if (error instanceof ServiceProblem) return false;
  if (error instanceof DOMException && error.name === 'TimeoutError') return true;
  // fetch rejects with a TypeError when the connection fails or is reset.
  return error instanceof TypeError;
}

/** Lands `records` on `session` once, however often the answer is lost on the way. */
export async function appendOnce(
  api: FetchClient<paths>,
  retry: RetryPolicy,
  session: { readonly id: string; readonly token: string },
  records: readonly OfferedRecord[],
  options: AppendOptions = {},
): Promise<Envelope[]> {
  const key = options.idempotencyKey ?? globalThis.crypto.randomUUID();
  const resends = options.resends ?? 4;
  for (let attempt = 0; ; attempt += 1) {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
    const signal =
      options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
    try {
      const { data, response } = await api.POST('/sessions/{id}/events', {
        params: { path: { id: session.id } },
        body: [...records],
        headers: { authorization: `Bearer ${session.token}`, 'idempotency-key': key },
        signal,
      });
      if (data === undefined) throw new Error(`the append answered ${response.status} empty`);
      return data;
    } catch (error) {
      options.signal?.throwIfAborted();
      if (!isLostAnswer(error) || attempt >= resends) throw error;
    }
    await sleep(backoffMs(retry, attempt), options.signal);
  }
}
