/**
 * The answers of the poll (decisions row 30, RFC 8628 §3.5, notes §3): the proposal
 * machine's answer to `poll.requested` as the vendor receives it. A wait or a stop (lapsed,
 * or declined by an owner) is a 400 problem whose `error` member is the RFC 8628 code; a grant is the receipt, repeated on every
 * poll until the proposal lapses, with the install key only for a new install.
 */
import { InvalidRequest } from '../errors.ts';
import type { ProposalAnswer as MachineAnswer } from '../machines/proposal.machine.ts';
import type { ProposalValue } from '../resources/types.ts';
import { recoverInstallKey } from './install-key.ts';

/** Row 30 receipt: `key` is the new install key, null when an update kept the key. */
export interface PollReceipt {
  readonly request: string;
  readonly install: string;
  readonly key: string | null;
  readonly vendor: string;
}

/** RFC 8628 §3.5: a wait or a stop, as a problem with the code as its `error` member too. */
function pollError(
  error: 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied',
  message: string,
  extra: Readonly<Record<string, unknown>> = {},
): InvalidRequest {
  return new InvalidRequest(error, message, { extensions: { error, ...extra } });
}

/**
 * The receipt for a poll the machine answered, or the 400 that says to wait or stop.
 * `presented` is the poll secret the vendor sent, from which a new install's key is
 * derived again (`install-key.ts`).
 */
export function pollReceipt(
  answer: MachineAnswer,
  proposal: ProposalValue,
  presented: string,
): PollReceipt {
  switch (answer.outcome) {
    case 'authorization_pending':
      throw pollError('authorization_pending', 'the owner has not consented yet');
    case 'slow_down':
      throw pollError('slow_down', `poll at most once every ${answer.interval} ms`, {
        interval: answer.interval,
      });
    case 'expired_token':
      throw pollError('expired_token', 'the proposal lapsed; propose again');
    case 'access_denied':
      throw pollError(
        'access_denied',
        'an owner of the tenant declined the proposal; stop polling',
      );
    case 'receipt':
      return {
        request: proposal.request,
        install: answer.install,
        key: answer.key === null ? null : keyOf(proposal, presented, answer.key),
        vendor: answer.vendor,
      };
    default:
      throw new Error(`the proposal machine answered ${answer.outcome} to a poll`);
  }
}

function keyOf(proposal: ProposalValue, presented: string, keyHash: string): string {
  const key =
    proposal.salt === null
      ? null
      : recoverInstallKey(presented, proposal.salt, proposal.request, keyHash);
  // The machine matched the secret and has not lapsed, so the salt is there and fits.
  if (key === null) throw new Error('the receipt key cannot be derived for this proposal');
  return key;
}
