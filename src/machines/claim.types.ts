/**
 * Context, events, answers and owed records of the claim machine (interface 3.4, 2.17;
 * decisions rows 8, 57, 58 and parts B and D). Kept beside `claim.machine.ts` so the claim
 * route and its actor type can import the shapes without the machine.
 *
 * One claim actor per call: the call is an `invoke.allowed` addressed to an executor, and
 * its cursor is the claim's `cause` (4.2). Not to be confused with the `cause` inside the
 * `invoke.allowed` body, which is the `model.output` that made the call.
 */

/** Row 57: a grant outlives the call's timeout by thirty seconds. */
export const GRANT_GRACE_MS = 30_000;

/** The call a claim is for, as the edge read it from the `invoke.allowed` record. */
export interface ClaimedCall {
  /** Cursor of the `invoke.allowed`: the claim body's `cause` (4.2) and the idem slots' name. */
  readonly cause: number;
  /** The call id the model gave the tool call. */
  readonly call: string;
  /** The call's deadline span in ms (`invoke.allowed` body `timeout`). */
  readonly timeout: number;
  /** Absolute ms: the `invoke.allowed` record's `at` plus `timeout` (row 58). */
  readonly deadline: number;
}

/** Who landed the call's one `invoke.completed` (part B producers). */
export type CompletedBy = 'executor' | 'mcp' | 'service';

/** What the claim machine remembers. */
export interface ClaimContext {
  /** The call, from the latest claim; null until the first claim. */
  readonly call: ClaimedCall | null;
  /** `invoke.claimed` records owed so far: `n` of the last `claim:<cause>:<n>` (row 8). */
  readonly claims: number;
  /** Who answered the call; null while it is unanswered. */
  readonly completedBy: CompletedBy | null;
}

/** The context before anything happened to the call. */
export const initialClaimContext: ClaimContext = { call: null, claims: 0, completedBy: null };

/** The events of table 3.4; `now` is absolute ms from the caller's injected clock. */
export type ClaimEvent =
  | {
      /** POST /sessions/{id}/executor/claim `{cause}` (4.2), after the edge found the cause shown. */
      readonly type: 'claim.requested';
      readonly now: number;
      /** The executor name of the claiming token (its producer is `executor:<name>`). */
      readonly executor: string;
      /** The cause is an `invoke.allowed` addressed to this executor (part D); else 403. */
      readonly addressed: boolean;
      readonly call: ClaimedCall;
    }
  | {
      /** An `invoke.completed` landed under idem `call:<cause>` (row 57: the slot's one completion). */
      readonly type: 'call.completed';
      readonly now: number;
      /** The executor's grant, `service:mcp`, or the service at the deadline (row 58). */
      readonly by: CompletedBy;
    };

/** The machine's answer to a claim; the edge maps it to 2.17 or an error. */
export type ClaimOutcome =
  /**
   * 3.4 rows 1 and 2: the edge mints the grant (audience `grant`, bound to `cause`,
   * expiring at `expires`) as `credential` and answers `{attempt, credential, expires}`.
   */
  | {
      readonly outcome: 'granted';
      readonly attempt: 'first' | 'again';
      /** `n` of the `invoke.claimed` this claim owes. */
      readonly claim: number;
      /** Absolute ms: `now + timeout + 30 s` (row 57). */
      readonly expires: number;
    }
  /** 3.4 row 3, row 57: `{attempt: "completed", credential: null, expires: null}`. */
  | { readonly outcome: 'completed' }
  /** Part D: shown to the token, but not this executor's `invoke.allowed` (403). */
  | { readonly outcome: 'forbidden' };

/** A record a claim owes, landed by the edge before it answers (idempotent through `idem`). */
export interface OwedRecord<TKind extends string, TBody> {
  readonly kind: { readonly name: TKind; readonly version: 1 };
  /** Decisions row 8. */
  readonly idem: string;
  readonly body: TBody;
}

/** Part B `invoke.claimed`, idem `claim:<cause>:<n>`, producer `executor:<name>`. */
export interface ClaimedRecord extends OwedRecord<
  'invoke.claimed',
  {
    readonly cause: number;
    readonly call: string;
    readonly attempt: 'first' | 'again';
    readonly expires: number;
  }
> {
  /** Part D: a claim lands as its executor. */
  readonly producer: string;
}

/**
 * Row 58: `invoke.completed {ok: false, error: "timeout"}` under idem `call:<cause>`,
 * landed by the service on its internal path. It is the record the service lands at the
 * deadline anyway, so whichever landing comes first fills the slot; if a completion beat
 * it there, the slot is filled all the same and the claim's `completed` holds.
 */
export type TimeoutRecord = OwedRecord<
  'invoke.completed',
  {
    readonly ok: false;
    readonly result: null;
    readonly error: 'timeout';
    readonly truncated: false;
  }
>;
