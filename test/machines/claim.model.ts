/**
 * An independent model of interface table 3.4 with 2.17 and decisions rows 8, 57, 58 and
 * part D, written without XState: every (state, event) cell is a function deciding the
 * rule taken, the next model state, the answer and the records owed. `Record` without
 * `Partial`, so no cell is left out.
 */
export type ModelStateName = 'never_claimed' | 'claimed_open' | 'answered';
export type ModelEventName = 'claim' | 'completion';

/** The call every run claims: an invoke.allowed at cursor 41, landed at `ALLOWED_AT`. */
export const CAUSE = 41;
export const CALL = 'toolu_01';
export const TIMEOUT = 60_000;
export const ALLOWED_AT = Date.UTC(2026, 0, 1);
export const DEADLINE = ALLOWED_AT + TIMEOUT;
export const EXECUTOR = 'acme-exec';

export interface ModelState {
  readonly state: ModelStateName;
  /** invoke.claimed records owed so far. */
  readonly claims: number;
}

export type ModelEvent =
  | { readonly type: 'claim'; readonly now: number; readonly addressed: boolean }
  | {
      readonly type: 'completion';
      readonly now: number;
      readonly by: 'executor' | 'mcp' | 'service';
    };

/** 2.17 as the route will answer it, or the 403 of part D; null for a completion. */
export type ModelAnswer =
  | { readonly attempt: 'first' | 'again'; readonly n: number; readonly expires: number }
  | { readonly attempt: 'completed' }
  | { readonly forbidden: true }
  | null;

/** A record the step owes, as the log would hold it. */
export interface ModelRecord {
  readonly kind: string;
  readonly idem: string;
  readonly producer: string | null;
  readonly body: Readonly<Record<string, unknown>>;
}

export interface Outcome {
  readonly rule: string;
  readonly next: ModelState;
  readonly answer: ModelAnswer;
  readonly owed: readonly ModelRecord[];
}

type Cell = (m: ModelState, e: ModelEvent) => Outcome;

export const initialModel: ModelState = { state: 'never_claimed', claims: 0 };

const stay = (rule: string, m: ModelState, answer: ModelAnswer): Outcome => ({
  rule,
  next: m,
  answer,
  owed: [],
});

/** A claim, granted: 3.4 rows 1 and 2 with rows 8 and 57. */
function grant(rule: string, m: ModelState, now: number): Outcome {
  const n = m.claims + 1;
  const attempt = n === 1 ? 'first' : 'again';
  // Row 57: expires = now + timeout + 30 s.
  const expires = now + TIMEOUT + 30_000;
  return {
    rule,
    next: { state: 'claimed_open', claims: n },
    answer: { attempt, n, expires },
    owed: [
      {
        kind: 'invoke.claimed',
        idem: `claim:${CAUSE}:${n}`,
        producer: `executor:${EXECUTOR}`,
        body: { cause: CAUSE, call: CALL, attempt, expires },
      },
    ],
  };
}

/** Row 58: at the deadline the service answers the call with its timeout. */
function timeout(rule: string, m: ModelState): Outcome {
  return {
    rule,
    next: { ...m, state: 'answered' },
    answer: { attempt: 'completed' },
    owed: [
      {
        kind: 'invoke.completed',
        idem: `call:${CAUSE}`,
        producer: null,
        body: { ok: false, result: null, error: 'timeout', truncated: false },
      },
    ],
  };
}

/** A claim of an unanswered call: part D first, then the deadline, then the grant. */
const claimOpen =
  (prefix: string): Cell =>
  (m, e) => {
    if (e.type !== 'claim') throw new Error('unreachable');
    if (!e.addressed) return stay(`${prefix}.claim.forbidden`, m, { forbidden: true });
    if (e.now >= DEADLINE) return timeout(`${prefix}.claim.timeout`, m);
    return grant(`${prefix}.claim.${m.claims === 0 ? 'first' : 'again'}`, m, e.now);
  };

/** Table 3.4 with the decisions rows, one cell per (state, event). */
export const table: Record<ModelStateName, Record<ModelEventName, Cell>> = {
  never_claimed: {
    claim: claimOpen('never'),
    completion: (m) => ({
      rule: 'never.completion',
      next: { ...m, state: 'answered' },
      answer: null,
      owed: [],
    }),
  },
  claimed_open: {
    claim: claimOpen('open'),
    completion: (m) => ({
      rule: 'open.completion',
      next: { ...m, state: 'answered' },
      answer: null,
      owed: [],
    }),
  },
  answered: {
    claim: (m, e) =>
      e.type === 'claim' && !e.addressed
        ? stay('answered.claim.forbidden', m, { forbidden: true })
        : stay('answered.claim.completed', m, { attempt: 'completed' }),
    completion: (m) => stay('answered.completion', m, null),
  },
};

/** Applies one event. */
export function step(m: ModelState, e: ModelEvent): Outcome {
  return table[m.state][e.type](m, e);
}

/** Every rule the model documents; the test asserts each is taken. */
export const RULES: readonly string[] = [
  'never.claim.forbidden',
  'never.claim.timeout',
  'never.claim.first',
  'never.completion',
  'open.claim.forbidden',
  'open.claim.timeout',
  'open.claim.again',
  'open.completion',
  'answered.claim.forbidden',
  'answered.claim.completed',
  'answered.completion',
];
