/**
 * Context and events of the turn machine (decisions part C, rows 34, 35, 50, 51, 60, 90).
 * Kept beside `turn.machine.ts` so the runtime and the status route can import the shapes
 * without the machine.
 *
 * The machine's events are the session's landed records, one event per record, named by
 * the record's kind and carrying its cursor, `at` and the body fields the chart reads.
 * Nothing else moves it: a session's turn state is a pure function of its log, so a fresh
 * actor fed the log from cursor 1 reaches the same snapshot as the one that lived it.
 */
import { emptyQueue, type MessageQueue } from './turn.queue.ts';

/** `live.phase` values while the session is open (row 35), and `ended` once archived. */
export type TurnPhase = 'idle' | 'inferring' | 'awaiting_tools' | 'compacting' | 'ended';

/** Why a turn ended (`turn.ended` reason, part B). */
export type TurnEndReason = 'completed' | 'cancelled' | 'rounds_exhausted' | 'failed' | 'archived';

/** Tokens per model key (decisions row 52). */
export type ModelUsage = Readonly<
  Record<string, { readonly input: number; readonly output: number }>
>;

/** A tool call of the round in flight and what answered it so far. */
export interface PendingCall {
  readonly call: string;
  readonly tool: string;
  /**
   * `open` until the authorizer decides it: `denied` answers it, `allowed` sends it to its
   * target, whose invoke.completed answers it (`completed`).
   */
  readonly state: 'open' | 'allowed' | 'denied' | 'completed';
  /** The cursor of its invoke.allowed (the `cause` of claims and the completion), once allowed. */
  readonly cause: number | null;
  /** `executor:<n>` or `connection:<c>`, once allowed. */
  readonly target: string | null;
  /** Row 58: when the service completes it as timed out (`at` of invoke.allowed + `timeout`). */
  readonly deadline: number | null;
}

/**
 * A record the chart owes: the part C transition has happened, its record has not landed
 * yet. The runtime lands owed records in order (`src/turns/plan.ts`); each one's landing
 * clears it. Replaying the log reproduces the same debts, so a driver cut by a crash
 * resumes exactly where the log says.
 */
export type Owed =
  | { readonly kind: 'turn.started'; readonly inputs: readonly number[] }
  | { readonly kind: 'turn.ended'; readonly reason: TurnEndReason; readonly error: string | null };

/** What `session.opened` fixed for every turn of the session. */
export interface OpenedWith {
  /** The round bound of every turn. */
  readonly rounds: number;
  /** The executor the session names, if any (row 90: without one, `no_executor`). */
  readonly executor: string | null;
}

/** Row 50's count of failed inference attempts. */
export interface Attempts {
  /** Failed attempts of the round in flight. */
  readonly failed: number;
  /** When the next attempt is due after a failure (`at` + `retry_in`), else null. */
  readonly retryAt: number | null;
  /** `inference.failed` records of the turn in flight (what a provider's `failures` reads). */
  readonly inTurn: number;
}

/** No attempt has failed. */
export const noAttempts: Attempts = { failed: 0, retryAt: null, inTurn: 0 };

/**
 * The turn machine's context. Its top-level fields are kept few (under 20, checked by
 * test/machines/turn.machine.test.ts): XState's `assign` copies the context with
 * `Object.assign({}, …)`, and V8 builds an object of 20 or more properties that way in
 * slow dictionary mode, which made every applied record cost about 9 µs more. Fields set
 * together are grouped (`opened`, `attempts`).
 */
export interface TurnContext {
  /** Cursor of the last record applied (0 before any). */
  readonly head: number;
  /** `at` of the last record applied; the idle archive counts from it (row 61). */
  readonly lastAt: number;
  /** `at` of the record that moved the phase last (`live.since`, row 34). */
  readonly since: number;
  /** Session parameters from `session.opened`. */
  readonly opened: OpenedWith;
  /** Messages waiting for the next turn (row 90), by cursor. */
  readonly queue: MessageQueue;
  /** The cursor of the turn in flight's `turn.started`; null between turns. */
  readonly turn: number | null;
  /** The messages the turn in flight answers. */
  readonly inputs: readonly number[];
  /** The round in flight (1-based); 0 between turns. */
  readonly round: number;
  /** The failed inference attempts of the turn in flight (row 50). */
  readonly attempts: Attempts;
  /** The calls of the round in flight (awaiting_tools). */
  readonly calls: readonly PendingCall[];
  /** The `model.output` whose calls are out, while awaiting tools. */
  readonly cause: number | null;
  /** The `compaction.requested` being answered, while compacting. */
  readonly compaction: number | null;
  /** Prompt tokens the last inference or compaction reported (`live.prompt_tokens`). */
  readonly promptTokens: number;
  /** Tokens the turn in flight used, per model key (`turn.ended` usage). */
  readonly usage: ModelUsage;
  /** Records the chart owes, in landing order. */
  readonly owed: readonly Owed[];
  /** Turns ended so far. */
  readonly ended: number;
  /** Row 60: a turn ended `archived`; the archive's `session.archived` follows, no turn starts. */
  readonly closing: boolean;
}

/** The context before `session.opened`. */
export const initialTurnContext: TurnContext = {
  head: 0,
  lastAt: 0,
  since: 0,
  opened: { rounds: 16, executor: null },
  queue: emptyQueue,
  turn: null,
  inputs: [],
  round: 0,
  attempts: noAttempts,
  calls: [],
  cause: null,
  compaction: null,
  promptTokens: 0,
  usage: {},
  owed: [],
  ended: 0,
  closing: false,
};

/** What every event carries: the landed record's cursor and `at`. */
interface Landed {
  readonly cursor: number;
  readonly at: number;
}

/** One landed record as the machine reads it (part B kinds; bodies cut to what it needs). */
export type TurnEvent =
  | (Landed & {
      readonly type: 'session.opened';
      readonly rounds: number;
      readonly executor: string | null;
    })
  | (Landed & { readonly type: 'message.submitted' })
  | (Landed & { readonly type: 'turn.cancel'; readonly turn: number | null })
  | (Landed & { readonly type: 'turn.started'; readonly inputs: readonly number[] })
  | (Landed & {
      readonly type: 'model.output';
      readonly turn: number;
      readonly round: number;
      readonly calls: readonly { readonly call: string; readonly tool: string }[];
      readonly stop: string;
      readonly model: string;
      readonly usage: { readonly input: number; readonly output: number };
    })
  | (Landed & {
      readonly type: 'inference.failed';
      readonly turn: number;
      readonly retryIn: number | null;
      readonly error: string;
    })
  | (Landed & {
      readonly type: 'invoke.allowed';
      readonly turn: number;
      readonly call: string;
      readonly target: string;
      /** The call's deadline span in ms (part B `timeout`). */
      readonly timeout: number;
    })
  | (Landed & { readonly type: 'invoke.denied'; readonly turn: number; readonly call: string })
  /** `cause` from its idem `call:<cause>`: the invoke.allowed it completes. */
  | (Landed & { readonly type: 'invoke.completed'; readonly cause: number | null })
  | (Landed & {
      readonly type: 'compaction.requested';
      readonly turn: number;
      readonly promptTokens: number;
    })
  | (Landed & {
      readonly type: 'compaction.completed';
      readonly requested: number;
      readonly through: number;
      readonly tokensAfter: number;
      readonly model: string;
      readonly usage: { readonly input: number; readonly output: number };
    })
  | (Landed & { readonly type: 'turn.ended'; readonly turn: number; readonly reason: string })
  | (Landed & { readonly type: 'session.archived' })
  /** Any other kind (clients' own kinds, claims): it only moves `head`. */
  | (Landed & { readonly type: 'record.other' });
