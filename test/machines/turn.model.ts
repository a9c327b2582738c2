/**
 * An independent model of decisions part C (with rows 50, 60, 90), written without XState:
 * every (phase, record kind) cell decides the rule taken and the next model state.
 * `Record` without `Partial`, so every cell must be decided.
 */
import type { TurnEvent, TurnPhase } from '../../src/machines/turn.types.ts';

type Kind = TurnEvent['type'];
type Ev<K extends Kind> = Extract<TurnEvent, { type: K }>;

/** What the model tracks: the parts of the machine's context the chart decides. */
export interface Model {
  readonly phase: TurnPhase;
  readonly turn: number | null;
  readonly round: number;
  readonly rounds: number;
  readonly queue: readonly number[];
  /** Owed records: `start` or `end:<reason>`. */
  readonly owed: readonly string[];
  /** Calls of the round not answered yet (undecided or allowed). */
  readonly open: readonly string[];
  /** Allowed calls not completed yet: call → the cursor of its invoke.allowed. */
  readonly allowed: Readonly<Record<string, number>>;
  readonly compaction: number | null;
  readonly closing: boolean;
}

export const initialModel: Model = {
  phase: 'idle',
  turn: null,
  round: 0,
  rounds: 16,
  queue: [],
  owed: [],
  open: [],
  allowed: {},
  compaction: null,
  closing: false,
};

export interface Outcome {
  readonly rule: string;
  readonly next: Model;
}

type Cell<K extends Kind> = (m: Model, e: Ev<K>) => Outcome;
type Row = { readonly [K in Kind]: Cell<K> };

const stay = (rule: string, m: Model): Outcome => ({ rule, next: m });

/** Part C: idle with queued messages and nothing ending starts the next turn (row 90). */
function settleIdle(o: Outcome): Outcome {
  const m = o.next;
  if (m.phase !== 'idle' || m.queue.length === 0 || m.closing) return o;
  if (m.owed.some((x) => x.startsWith('end:'))) return o;
  return {
    rule: o.rule,
    next: { ...m, phase: 'inferring', queue: [], owed: [...m.owed, 'start'] },
  };
}

const toIdle = (m: Model, reason: string): Model => ({
  ...m,
  phase: 'idle',
  owed: [...m.owed, `end:${reason}`],
});

/** Cells every live phase shares. */
function shared(p: string): Row {
  return {
    'session.opened': (m, e) => stay(`${p}.opened`, { ...m, rounds: e.rounds }),
    'message.submitted': (m, e) =>
      stay(`${p}.message.queued`, { ...m, queue: [...m.queue, e.cursor] }),
    'turn.started': (m, e) =>
      stay(`${p}.started`, {
        ...m,
        turn: e.cursor,
        round: 1,
        owed: m.owed[0] === 'start' ? m.owed.slice(1) : m.owed,
      }),
    'turn.cancel': (m, e) =>
      e.turn === null || e.turn === m.turn
        ? { rule: `${p}.cancel`, next: toIdle(m, 'cancelled') }
        : stay(`${p}.cancel.other`, m),
    'turn.ended': (m, e) =>
      e.turn === m.turn
        ? {
            rule: `${p}.ended.outside`,
            next: {
              ...m,
              phase: 'idle',
              turn: null,
              round: 0,
              open: [],
              allowed: {},
              compaction: null,
              owed: m.owed.filter((x) => !x.startsWith('end:')),
              closing: e.reason === 'archived',
            },
          }
        : stay(`${p}.ended.stale`, m),
    'session.archived': (m) => stay(`${p}.archived`, { ...m, phase: 'ended', owed: [], queue: [] }),
    'model.output': (m) => stay(`${p}.output.stale`, m),
    'inference.failed': (m) => stay(`${p}.failed.stale`, m),
    'invoke.allowed': (m) => stay(`${p}.allowed.stale`, m),
    'invoke.denied': (m) => stay(`${p}.denied.stale`, m),
    'invoke.completed': (m) => stay(`${p}.completed.stale`, m),
    'compaction.requested': (m) => stay(`${p}.compaction.stale`, m),
    'compaction.completed': (m) => stay(`${p}.compacted.stale`, m),
    'record.other': (m) => stay(`${p}.other`, m),
  };
}

/** A call answer in awaiting_tools: the last one moves the round on or ends the turn. */
function answer(m: Model, call: string | null): Outcome {
  if (call === null || !m.open.includes(call)) return stay('awaiting.answer.stale', m);
  const open = m.open.filter((c) => c !== call);
  const allowed = Object.fromEntries(Object.entries(m.allowed).filter(([c]) => c !== call));
  if (open.length > 0) return stay('awaiting.answer.one', { ...m, open, allowed });
  if (m.round >= m.rounds)
    return {
      rule: 'awaiting.answer.rounds_spent',
      next: toIdle({ ...m, open, allowed }, 'rounds_exhausted'),
    };
  return {
    rule: 'awaiting.answer.next_round',
    next: { ...m, open, allowed, phase: 'inferring', round: m.round + 1 },
  };
}

/** The allowed call a completion's cause names, if it is still out. */
const callOfCause = (m: Model, cause: number | null): string | null =>
  Object.entries(m.allowed).find(([, c]) => c === cause)?.[0] ?? null;

const idle: Row = {
  ...shared('idle'),
  'message.submitted': (m, e) =>
    m.owed.some((x) => x.startsWith('end:')) || m.closing
      ? stay('idle.message.waits', { ...m, queue: [...m.queue, e.cursor] })
      : stay('idle.message.starts', { ...m, phase: 'inferring', owed: [...m.owed, 'start'] }),
  'turn.cancel': (m) => stay('idle.cancel.nothing', m),
  'turn.ended': (m, e) =>
    e.turn === m.turn
      ? stay('idle.ended.owed', {
          ...m,
          turn: null,
          round: 0,
          open: [],
          allowed: {},
          compaction: null,
          owed: m.owed.filter((x) => !x.startsWith('end:')),
          closing: e.reason === 'archived',
        })
      : stay('idle.ended.stale', m),
};

const inferring: Row = {
  ...shared('inferring'),
  'model.output': (m, e) => {
    if (e.turn !== m.turn || e.round !== m.round) return stay('inferring.output.stale', m);
    if (e.stop === 'tool_use' && e.calls.length > 0) {
      return stay('inferring.output.tools', {
        ...m,
        phase: 'awaiting_tools',
        open: e.calls.map((c) => c.call),
        allowed: {},
      });
    }
    return { rule: 'inferring.output.final', next: toIdle(m, 'completed') };
  },
  'inference.failed': (m, e) => {
    if (e.turn !== m.turn) return stay('inferring.failed.stale', m);
    if (e.retryIn === null) return { rule: 'inferring.failed.spent', next: toIdle(m, 'failed') };
    return stay('inferring.failed.retry', m);
  },
  'compaction.requested': (m, e) =>
    e.turn === m.turn
      ? stay('inferring.compaction', { ...m, phase: 'compacting', compaction: e.cursor })
      : stay('inferring.compaction.stale', m),
};

const compacting: Row = {
  ...shared('compacting'),
  'compaction.completed': (m, e) =>
    e.requested === m.compaction
      ? stay('compacting.completed', { ...m, phase: 'inferring', compaction: null })
      : stay('compacting.completed.stale', m),
};

const awaiting: Row = {
  ...shared('awaiting'),
  'invoke.allowed': (m, e) =>
    e.turn === m.turn && m.open.includes(e.call) && !(e.call in m.allowed)
      ? stay('awaiting.allowed', { ...m, allowed: { ...m.allowed, [e.call]: e.cursor } })
      : stay('awaiting.allowed.stale', m),
  'invoke.denied': (m, e) =>
    e.turn === m.turn && !(e.call in m.allowed)
      ? answer(m, e.call)
      : stay('awaiting.answer.stale', m),
  'invoke.completed': (m, e) => answer(m, callOfCause(m, e.cause)),
};

const ended: Row = Object.fromEntries(
  Object.keys(idle).map((kind) => [kind, (m: Model) => stay('ended.ignored', m)]),
) as unknown as Row;

export const table: Record<TurnPhase, Row> = {
  idle,
  inferring,
  compacting,
  awaiting_tools: awaiting,
  ended,
};

/** Applies one record. */
export function step(m: Model, e: TurnEvent): Outcome {
  const cell = table[m.phase][e.type] as Cell<Kind>;
  const outcome = cell(m, e);
  return m.phase === 'ended' ? outcome : settleIdle(outcome);
}

/** The rules a run over every kind of record must take, each at least once. */
export const RULES: readonly string[] = [
  'idle.message.starts',
  'idle.message.waits',
  'idle.ended.owed',
  'idle.cancel.nothing',
  'inferring.started',
  'inferring.message.queued',
  'inferring.output.tools',
  'inferring.output.final',
  'inferring.failed.retry',
  'inferring.failed.spent',
  'inferring.compaction',
  'inferring.cancel',
  'compacting.completed',
  'compacting.cancel',
  'awaiting.allowed',
  'awaiting.answer.one',
  'awaiting.answer.next_round',
  'awaiting.answer.rounds_spent',
  'awaiting.cancel',
  'inferring.ended.outside',
  'idle.archived',
];
