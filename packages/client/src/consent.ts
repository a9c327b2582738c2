/**
 * Waiting for consent (RFC 8628 §3.4 and §3.5, decisions row 30): the
 * vendor polls `POST /consent/token` with its poll secret, at most once every `interval`
 * ms. `authorization_pending` waits and polls again, `slow_down` adds five seconds to the
 * interval for every later poll, `expired_token` (the proposal lapsed) and
 * `access_denied` (an owner declined) end the wait with their `ServiceProblem`.
 */
import type { Client as FetchClient } from 'openapi-fetch';
import type { components, paths } from './openapi.ts';
import { ServiceProblem } from './problem.ts';
import { sleep } from './transport.ts';

type Proposal = components['schemas']['ProposalAnswer'];
type Receipt = components['schemas']['PollAnswer'];

/** RFC 8628 §3.5: what `slow_down` adds to the interval. */
export const SLOW_DOWN_MS = 5000;

/** One answered poll that said to keep waiting. */
export interface ConsentProgress {
  /** `authorization_pending` (no consent yet) or `slow_down` (polled too soon). */
  readonly state: 'authorization_pending' | 'slow_down';
  /** Polls sent so far. */
  readonly polls: number;
  /** The wait before the next poll, in ms. */
  readonly interval: number;
}

export interface ConsentOptions {
  /** Stops waiting: the wait rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Called after every poll that says to keep waiting. */
  readonly onProgress?: (progress: ConsentProgress) => void;
  /** How the wait between polls is spent; a real timer by default (tests pass a clock). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The poll's `error` member, when the problem is a poll's wait or stop. */
function pollError(problem: ServiceProblem): string | undefined {
  const { error } = problem.body;
  return problem.status === 400 && typeof error === 'string' ? error : undefined;
}

/**
 * Polls for `proposal`'s receipt until an owner consents; answers the receipt (its `key`
 * is the new install key, null when an update kept the install's key). The first poll
 * goes at once, each later one `interval` ms after the previous.
 */
export async function waitForConsent(
  api: FetchClient<paths>,
  proposal: Proposal,
  options: ConsentOptions = {},
): Promise<Receipt> {
  const wait = options.sleep ?? sleep;
  let interval = proposal.interval;
  for (let polls = 1; ; polls += 1) {
    options.signal?.throwIfAborted();
    try {
      const { data, response } = await api.POST('/consent/token', {
        body: { request: proposal.request },
        headers: { authorization: `Bearer ${proposal.poll_secret}` },
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      if (data === undefined) throw new Error(`the poll answered ${response.status} empty`);
      return data;
    } catch (error) {
      if (!(error instanceof ServiceProblem)) throw error;
      const state = pollError(error);
      if (state === 'slow_down') {
        // The service says the interval now in force; never poll sooner than either.
        const told = error.body.interval;
        interval = Math.max(interval + SLOW_DOWN_MS, typeof told === 'number' ? told : 0);
      } else if (state !== 'authorization_pending') {
        // expired_token, access_denied, and every other refusal end the wait.
        throw error;
      }
      options.onProgress?.({ state, polls, interval });
    }
    await wait(interval, options.signal);
  }
}
