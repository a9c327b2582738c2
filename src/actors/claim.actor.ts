/**
 * The claim as a hosted actor: `claimMachine` (interface 3.4) with its two effects
 * provided, answering each command with the machine's `claim.answered`. One actor per
 * call, id `<session>/<cause>`; its snapshot (how many claims were granted, whether the
 * call is answered) lives under type `claim` in the control store, so claims racing from
 * two processes are serialised by the snapshot's version check.
 *
 * The effects land what the machine owes in the session's log, each under its idem as the
 * batch key, so an effect run again after a lost race replays instead of landing twice:
 * `invoke.claimed` as the executor (`claim:<cause>:<n>`), and the timeout completion as
 * the service (`call:<cause>`), which is refused when the call's slot was filled first
 * (the completion that filled it stands, row 57).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { Conflict } from '../errors.ts';
import {
  claimMachine,
  type ClaimOutcome,
  type ClaimedRecord,
  type TimeoutRecord,
} from '../machines/claim.machine.ts';
import type { LogStore, PendingRecord } from '../storage/log-store.ts';
import type { ActorType } from './actor-type.ts';

/** Snapshots of claims live under this type in the control store. */
export const CLAIM_ACTOR = 'claim';

/** The actor id of the claim on `cause` of `session`. */
export function claimActorId(session: string, cause: number): string {
  return `${session}/${String(cause)}`;
}

function sessionOf(id: string): string {
  const at = id.lastIndexOf('/');
  if (at <= 0) throw new Error(`${id} is not a claim actor id`);
  return id.slice(0, at);
}

/** Lands `record` under its idem; a filled slot (a different record there) is not an error. */
async function landOnce(log: LogStore, stream: string, record: PendingRecord): Promise<void> {
  try {
    await log.append({
      stream,
      records: [record],
      key: record.idem,
      fingerprint: createHash('sha256').update(record.body).digest('hex'),
    });
  } catch (error) {
    if (error instanceof Conflict && error.code === 'idempotency_conflict') return;
    throw error;
  }
}

function pending(owed: ClaimedRecord | TimeoutRecord, producer: string): PendingRecord {
  const body = canonicalize(owed.body);
  if (body === undefined) throw new Error(`${owed.kind.name} has no canonical JSON form`);
  return { kind: owed.kind, producer, to: null, idem: owed.idem, body };
}

/** The claim actor type over the session logs. */
export function claimActor(log: LogStore): ActorType<typeof claimMachine, ClaimOutcome | null> {
  return {
    type: CLAIM_ACTOR,
    logic: (effect, id) => {
      const stream = sessionOf(id);
      return claimMachine.provide({
        actions: {
          landClaimed: (_, record) => {
            effect(landOnce(log, stream, pending(record, record.producer)));
          },
          landTimeout: (_, record) => {
            effect(landOnce(log, stream, pending(record, 'service:turn')));
          },
        },
      });
    },
    // A claim is answered; a completion (`call.completed`) only moves the machine.
    answer: (_, emitted) => emitted.at(-1)?.answer ?? null,
  };
}
