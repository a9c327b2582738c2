/**
 * The write filter (decisions part D, rows 15 and 85): a pure function over the stamped
 * envelopes of one offered batch, the credential that offered them and, for a grant, the
 * envelope of the call it completes. It never reads a body. Default deny: what no rule
 * below allows is refused with the record's index, its kind and a reason, and the whole
 * batch lands nothing (row 85).
 *
 * | Producer            | Credential       | May land                       | to   | idem            |
 * |---------------------|------------------|--------------------------------|------|-----------------|
 * | principal, console  | session + append | message.submitted, turn.cancel | null | `<key>:<i>`     |
 * | executor            | grant            | one invoke.completed           | null | `call:<cause>`  |
 * | executor            | session token    | nothing (claims land through the claim route) |
 * | service             | —                | never through a client credential              |
 *
 * `<key>` is the batch's idempotency key: the token's `idk`, or `idk:<Idempotency-Key>`
 * (row 9), so every record a client lands has an idem slot of its own.
 */
import { isIndexedSlot } from '../schemas/idem-slots.ts';
import { kindKey } from '../schemas/record-kinds.ts';
import type { Envelope, Kind } from '../schemas/records.ts';

/** What the filter knows of the credential a batch was offered under. */
export interface WriterCredential {
  readonly audience: 'session' | 'grant';
  /** The producer stamped on every record, from the credential (part D). */
  readonly producer: string;
  readonly scopes: ReadonlySet<string>;
  /** The batch's idempotency key (row 9). */
  readonly key: string;
  /** For a grant: the cursor of the invoke.allowed it completes. */
  readonly cause?: number;
}

/** A stamped envelope before the store mints `cursor`, `at` and `size`. */
export interface OfferedEnvelope {
  readonly kind: Kind;
  readonly producer: string;
  readonly to: string | null;
  readonly idem: string | null;
}

/** The filter's answer: every record accepted, or the first refused one and why. */
export type FilterVerdict =
  | { readonly accepted: true }
  | {
      readonly accepted: false;
      readonly index: number;
      readonly kind: Kind;
      readonly reason: string;
    };

/** Part D: the kinds a principal or console user lands, each at version 1. */
const HOLDER_KINDS: ReadonlyMap<string, number> = new Map([
  ['message.submitted', 1],
  ['turn.cancel', 1],
]);

/** What every `holderIdem(key, index)` of one key starts with, its index following. */
function holderSlotPrefix(key: string): string {
  return `${key}:`;
}

/** Row 8: the idem slot of record `index` of a batch under `key`. */
export function holderIdem(key: string, index: number): string {
  return `${holderSlotPrefix(key)}${index}`;
}

/** Row 8: the one slot a call's completion lands in. */
export function completionIdem(cause: number): string {
  return `call:${cause}`;
}

/** A kind as the rules name it: `<name>@<version>`. */
function kindOf(kind: Kind): string {
  return kindKey(kind.name, kind.version);
}

/** What a record of one credential is checked against: one rule per record of its batch. */
type RecordRule = (envelope: OfferedEnvelope, index: number) => string | null;

/**
 * The rule for every record a credential offers, chosen once per batch: the producer
 * and audience checks do not change from one record to the next.
 */
function ruleFor(credential: WriterCredential, cause: Envelope | null): RecordRule {
  const producer = credential.producer;
  if (producer.startsWith('principal:') || producer.startsWith('console:')) {
    if (credential.audience !== 'session' || !credential.scopes.has('append')) {
      return () => 'the token may not append';
    }
    const slots = holderSlotPrefix(credential.key);
    return (envelope, index) => {
      const { kind } = envelope;
      if (HOLDER_KINDS.get(kind.name) !== kind.version) {
        return `${producer} may land message.submitted@1 and turn.cancel@1 only, not ${kindOf(kind)}`;
      }
      if (!isIndexedSlot(envelope.idem, slots, index)) {
        return "the idem slot is not the token key's slot for this index";
      }
      return null;
    };
  }
  if (producer.startsWith('executor:')) {
    if (credential.audience !== 'grant') {
      return () =>
        'an executor token does not append: claim the call and complete it under its grant';
    }
    return (envelope, index) => completionRefusal(credential, envelope, index, cause);
  }
  return () => `${producer} may not land records through a client credential`;
}

/** Checks one batch; see the file header for the rules. */
export function filterBatch(
  credential: WriterCredential,
  envelopes: readonly OfferedEnvelope[],
  cause: Envelope | null = null,
): FilterVerdict {
  const rule = ruleFor(credential, cause);
  for (let index = 0; index < envelopes.length; index++) {
    const envelope = envelopes[index];
    if (envelope === undefined) continue;
    const reason = refusal(credential.producer, envelope) ?? rule(envelope, index);
    if (reason !== null) return { accepted: false, index, kind: envelope.kind, reason };
  }
  return { accepted: true };
}

/** What every record must be, whoever offers it: stamped as its producer, and public. */
function refusal(producer: string, envelope: OfferedEnvelope): string | null {
  if (envelope.producer !== producer) return `the record is not stamped as ${producer}`;
  if (envelope.to !== null) return 'records a client lands are public (to must be null)';
  return null;
}

/** Part D: a grant lands one invoke.completed for the invoke.allowed addressed to it. */
function completionRefusal(
  credential: WriterCredential,
  envelope: OfferedEnvelope,
  index: number,
  cause: Envelope | null,
): string | null {
  if (index > 0) return 'a grant completes one call: the batch holds one record';
  if (kindOf(envelope.kind) !== 'invoke.completed@1') {
    return `a grant lands invoke.completed@1 only, not ${kindOf(envelope.kind)}`;
  }
  if (credential.cause === undefined || cause?.cursor !== credential.cause) {
    return 'the grant names no call on this session';
  }
  if (kindOf(cause.kind) !== 'invoke.allowed@1' || cause.to !== credential.producer) {
    return `the call at ${cause.cursor} is not addressed to ${credential.producer}`;
  }
  if (envelope.idem !== completionIdem(cause.cursor)) {
    return `the completion must take the slot ${completionIdem(cause.cursor)}`;
  }
  return null;
}
