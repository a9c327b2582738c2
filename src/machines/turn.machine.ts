/**
 * The turn machine: decisions part C (`live.phase`) with rows 50, 51, 60, 90 and 91.
 *
 * Its events are the session's landed records (`turn.types.ts`), so a session's turn state
 * is a pure function of its log: the runtime feeds every record in cursor order, a fresh
 * actor fed the same log from cursor 1 reaches the same snapshot, and nothing is lost when
 * a process dies. Each transition of part C is taken on the record the table names
 * (`idle --message.submitted--> inferring`); the record the table lands in parentheses
 * (`turn.started`, `turn.ended`) becomes a debt in `owed`, which the runtime pays by
 * landing it (`src/turns/plan.ts`), and whose landing clears it. Work that is not a debt
 * (asking the model, summarising, answering calls) is read off the state by the planner.
 *
 * Purity: no storage, clock or randomness. Time arrives as the records' `at`; due times
 * (a retry's backoff, row 50) are kept as instants derived from them.
 */
import { and, assign, not, or, setup } from 'xstate';
import {
  initialTurnContext,
  noAttempts,
  type ModelUsage,
  type Owed,
  type PendingCall,
  type TurnContext,
  type TurnEndReason,
  type TurnEvent,
} from './turn.types.ts';
import { emptyQueue, enqueue, queued } from './turn.queue.ts';

export * from './turn.types.ts';
export * from './turn.queue.ts';

type Ev<T extends TurnEvent['type']> = Extract<TurnEvent, { type: T }>;

/** Adds `usage` of `model` to a per-model tally. */
function addUsage(
  tally: ModelUsage,
  model: string,
  usage: { readonly input: number; readonly output: number },
): ModelUsage {
  const before = tally[model] ?? { input: 0, output: 0 };
  return {
    ...tally,
    [model]: { input: before.input + usage.input, output: before.output + usage.output },
  };
}

/** Not answered yet: undecided, or allowed and not completed. */
const unanswered = (call: PendingCall): boolean =>
  call.state === 'open' || call.state === 'allowed';

/**
 * The call of the round `event` answers, if any: a denial names an undecided call of the
 * turn; a completion names, by its cause, an allowed call not completed yet.
 */
function answeredCall(context: TurnContext, event: TurnEvent): PendingCall | undefined {
  if (event.type === 'invoke.denied') {
    if (event.turn !== context.turn) return undefined;
    return context.calls.find((c) => c.call === event.call && c.state === 'open');
  }
  if (event.type === 'invoke.completed') {
    if (event.cause === null) return undefined;
    return context.calls.find((c) => c.cause === event.cause && c.state === 'allowed');
  }
  return undefined;
}

/** The debt of a turn that ends now for `reason`. */
const ending = (reason: TurnEndReason, error: string | null = null): Owed => ({
  kind: 'turn.ended',
  reason,
  error,
});

const turn = setup({
  types: { context: {} as TurnContext, events: {} as TurnEvent },
  actions: {
    /** Every record moves the head; part C time is the records' `at`. */
    advance: assign(({ event }) => ({ head: event.cursor, lastAt: event.at })),
    /** Marks when the phase changed (`live.since`, row 34). */
    markSince: assign(({ event }) => ({ since: event.at })),
    /** `session.opened`: the round bound and the executor the session runs with. */
    open: assign(({ event }) => {
      const e = event as Ev<'session.opened'>;
      return { opened: { rounds: e.rounds, executor: e.executor }, since: e.at };
    }),
    /** Row 90: a message waits for the next turn. */
    enqueue: assign(({ context, event }) => ({ queue: enqueue(context.queue, event.cursor) })),
    /** Part C: the queued messages open a turn; `turn.started` is owed. */
    begin: assign(({ context }) => ({
      queue: emptyQueue,
      owed: [...context.owed, { kind: 'turn.started', inputs: queued(context.queue) } as const],
    })),
    /** `turn.started` landed: the turn is named by its cursor, round 1 begins. */
    start: assign(({ context, event }) => ({
      turn: event.cursor,
      inputs: (event as Ev<'turn.started'>).inputs,
      round: 1,
      attempts: noAttempts,
      usage: {},
      owed: context.owed[0]?.kind === 'turn.started' ? context.owed.slice(1) : context.owed,
    })),
    /** A model.output: its tokens count for the turn; its calls go out. */
    takeOutput: assign(({ context, event }) => {
      const e = event as Ev<'model.output'>;
      return {
        usage: addUsage(context.usage, e.model, e.usage),
        promptTokens: e.usage.input,
        attempts: { ...context.attempts, failed: 0, retryAt: null },
        cause: e.calls.length > 0 ? e.cursor : null,
        calls: e.calls.map((c) => ({
          call: c.call,
          tool: c.tool,
          state: 'open' as const,
          cause: null,
          target: null,
          deadline: null,
        })),
      };
    }),
    /** Row 50: a failed attempt; the next one is due `retry_in` after it landed. */
    takeFailure: assign(({ context, event }) => {
      const e = event as Ev<'inference.failed'>;
      return {
        attempts: {
          failed: context.attempts.failed + 1,
          retryAt: e.retryIn === null ? null : e.at + e.retryIn,
          inTurn: context.attempts.inTurn + 1,
        },
      };
    }),
    /** The turn ends: `turn.ended` is owed with this reason. */
    owe: assign(({ context }, params: { reason: TurnEndReason }) => ({
      owed: [...context.owed, ending(params.reason)],
      attempts: { ...context.attempts, retryAt: null },
    })),
    /** Row 50: retries are spent; the turn ends failed with the last error. */
    oweFailed: assign(({ context, event }) => ({
      owed: [...context.owed, ending('failed', (event as Ev<'inference.failed'>).error)],
      attempts: { ...context.attempts, retryAt: null },
    })),
    /** §6.3: the compaction in flight. */
    requestCompaction: assign(({ event }) => ({
      compaction: event.cursor,
      promptTokens: (event as Ev<'compaction.requested'>).promptTokens,
    })),
    /** §6.3: later prompts start from the summary. */
    completeCompaction: assign(({ context, event }) => {
      const e = event as Ev<'compaction.completed'>;
      return {
        compaction: null,
        promptTokens: e.tokensAfter,
        usage: addUsage(context.usage, e.model, e.usage),
      };
    }),
    /** The authorizer allowed a call: it is out at its target until its deadline. */
    allowCall: assign(({ context, event }) => {
      const e = event as Ev<'invoke.allowed'>;
      return {
        calls: context.calls.map((c) =>
          c.call === e.call && c.state === 'open'
            ? {
                ...c,
                state: 'allowed' as const,
                cause: e.cursor,
                target: e.target,
                deadline: e.at + e.timeout,
              }
            : c,
        ),
      };
    }),
    /** A call of the round is answered (denied, or its completion landed). */
    answerCall: assign(({ context, event }) => {
      const answered = answeredCall(context, event);
      const state = event.type === 'invoke.denied' ? ('denied' as const) : ('completed' as const);
      return { calls: context.calls.map((c) => (c === answered ? { ...c, state } : c)) };
    }),
    /** Every call answered: the next round asks the model again. */
    nextRound: assign(({ context }) => ({
      round: context.round + 1,
      attempts: { ...context.attempts, failed: 0, retryAt: null },
      calls: [],
      cause: null,
    })),
    /** `turn.ended` landed: the turn is over and its debt paid. */
    finish: assign(({ context, event }) => ({
      closing: event.type === 'turn.ended' && event.reason === 'archived',
      turn: null,
      inputs: [],
      round: 0,
      attempts: { ...context.attempts, failed: 0, retryAt: null },
      calls: [],
      cause: null,
      compaction: null,
      usage: {},
      owed: context.owed.filter((o) => o.kind !== 'turn.ended'),
      ended: context.ended + 1,
    })),
    /** Row 60: nothing is owed once the session is archived. */
    close: assign(({ context }) => ({
      owed: [],
      queue: emptyQueue,
      attempts: { ...context.attempts, retryAt: null },
    })),
  },
  guards: {
    /** A record of the turn in flight (stale ones, after a cancel, change nothing). */
    ofTurn: ({ context, event }) =>
      'turn' in event && typeof event.turn === 'number' && event.turn === context.turn,
    /** Part B: `turn.cancel {turn: null}` cancels the active turn, else the one named. */
    cancelsThisTurn: ({ context, event }) =>
      event.type === 'turn.cancel' && (event.turn === null || event.turn === context.turn),
    /** model.output of the turn and round in flight. */
    isRoundOutput: ({ context, event }) =>
      event.type === 'model.output' && event.turn === context.turn && event.round === context.round,
    asksForTools: ({ event }) =>
      event.type === 'model.output' && event.stop === 'tool_use' && event.calls.length > 0,
    /** Row 50: `retry_in` null means retries are spent. */
    retriesSpent: ({ event }) => event.type === 'inference.failed' && event.retryIn === null,
    isCompactionAnswer: ({ context, event }) =>
      event.type === 'compaction.completed' && event.requested === context.compaction,
    /** After this answer no call of the round is unanswered. */
    lastCallAnswered: ({ context, event }) => {
      const answered = answeredCall(context, event);
      return answered !== undefined && context.calls.every((c) => c === answered || !unanswered(c));
    },
    /** The record answers a call of the round not answered yet. */
    isPendingCall: ({ context, event }) => answeredCall(context, event) !== undefined,
    /** invoke.allowed of an undecided call of the round. */
    isOpenCall: ({ context, event }) =>
      event.type === 'invoke.allowed' &&
      event.turn === context.turn &&
      context.calls.some((c) => c.call === event.call && c.state === 'open'),
    roundsSpent: ({ context }) => context.round >= context.opened.rounds,
    hasQueue: ({ context }) => context.queue.size > 0,
    owesEnd: ({ context }) => context.owed.some((o) => o.kind === 'turn.ended'),
    /** Row 60: an archive ended the turn; no turn starts before its `session.archived`. */
    isClosing: ({ context }) => context.closing,
  },
});

/** What every live phase does with the records that do not move it. */
const common = {
  'message.submitted': {
    actions: ['advance', 'enqueue'],
    description: 'row 90: a message sent mid-turn waits for the next turn',
  },
  'turn.started': { actions: ['advance', 'start'], description: 'the owed turn.started landed' },
  'turn.ended': [
    {
      guard: 'ofTurn',
      target: '#turn.idle',
      actions: ['advance', 'finish', 'markSince'],
      description: 'row 60: the turn was ended from outside (an archive)',
    },
    { actions: 'advance', description: 'a stale turn.ended changes nothing' },
  ],
  'session.archived': {
    target: '#turn.ended',
    actions: ['advance', 'close', 'markSince'],
    description: 'row 60: session.archived is final',
  },
  'session.opened': { actions: ['advance', 'open'] },
  'turn.cancel': [
    {
      guard: 'cancelsThisTurn',
      target: '#turn.idle',
      actions: ['advance', { type: 'owe', params: { reason: 'cancelled' } }, 'markSince'],
      description: 'part C: a cancel ends the turn (turn.ended cancelled)',
    },
    { actions: 'advance', description: 'a cancel of another turn changes nothing' },
  ],
  'model.output': { actions: 'advance', description: 'a stale output changes nothing' },
  'inference.failed': { actions: 'advance' },
  'invoke.allowed': { actions: 'advance' },
  'invoke.denied': { actions: 'advance' },
  'invoke.completed': { actions: 'advance' },
  'compaction.requested': { actions: 'advance' },
  'compaction.completed': { actions: 'advance' },
  'record.other': { actions: 'advance' },
} as const;

/**
 * awaiting_tools: a denial or a completion answers a call the same way; the last answer
 * of the round asks the model again, or ends the turn once its rounds are spent.
 */
const answerTransitions = [
  {
    guard: and(['isPendingCall', 'lastCallAnswered', 'roundsSpent']),
    target: 'idle',
    actions: [
      'advance',
      'answerCall',
      { type: 'owe', params: { reason: 'rounds_exhausted' } },
      'markSince',
    ],
    description: 'rounds spent (turn.ended rounds_exhausted)',
  },
  {
    guard: and(['isPendingCall', 'lastCallAnswered']),
    target: 'inferring',
    actions: ['advance', 'answerCall', 'nextRound', 'markSince'],
    description: 'part C: every call completed or denied (round + 1)',
  },
  { guard: 'isPendingCall', actions: ['advance', 'answerCall'] },
  { actions: 'advance' },
] as const;

/** The turn machine of decisions part C; see the file header. */
export const turnMachine = turn.createMachine({
  id: 'turn',
  initial: 'idle',
  context: initialTurnContext,
  meta: {
    title: 'Turn',
    source: 'decisions part C; rows 34, 35, 50, 51, 60, 90, 91; interface §6.3',
    invariants: [
      'The events are the landed records, in cursor order: replaying a log from cursor 1 into a fresh actor reaches the snapshot of the actor that lived it.',
      'At most one turn is in flight; a message sent during a turn waits in `queue` and starts the next turn (row 90).',
      'Every turn that starts ends with exactly one `turn.ended` (reason completed, cancelled, rounds_exhausted, failed or archived); until it lands it is owed.',
      'A failed inference stays `inferring` with the next attempt due `retry_in` after it; `retry_in` null ends the turn `failed` (row 50).',
      'No more than `rounds` model outputs per turn: when the calls of the last round are answered the turn ends `rounds_exhausted`.',
      'Compaction happens before an inference whose prompt reaches `compact_at` and returns to `inferring` (§6.3, row 51).',
      'Records of another turn or round (late answers after a cancel or an archive) change nothing but the head.',
      '`session.archived` is final: `ended`, nothing owed (rows 60, 61).',
    ],
  },
  states: {
    idle: {
      description: 'No turn in flight (part C).',
      always: {
        guard: and(['hasQueue', not('owesEnd'), not('isClosing')]),
        target: 'inferring',
        actions: ['begin', 'markSince'],
        description: 'row 90: queued messages start the next turn once the last one ended',
      },
      on: {
        ...common,
        'message.submitted': [
          {
            guard: or(['owesEnd', 'isClosing']),
            actions: ['advance', 'enqueue'],
            description:
              'the ending turn has not landed turn.ended yet, or an archive is closing the session',
          },
          {
            target: 'inferring',
            actions: ['advance', 'enqueue', 'begin', 'markSince'],
            description: 'part C: a message starts a turn (turn.started)',
          },
        ],
        'turn.ended': [
          {
            guard: 'ofTurn',
            actions: ['advance', 'finish'],
            description: 'the owed turn.ended landed',
          },
          { actions: 'advance', description: 'a stale turn.ended changes nothing' },
        ],
        'turn.cancel': { actions: 'advance', description: 'no turn in flight: nothing to cancel' },
      },
    },
    inferring: {
      description: 'The model is being asked, or a failed attempt waits for its retry (part C).',
      on: {
        ...common,
        'model.output': [
          {
            guard: and(['isRoundOutput', 'asksForTools']),
            target: 'awaiting_tools',
            actions: ['advance', 'takeOutput', 'markSince'],
            description: 'part C: the model asked for tools (allowed or denied per call)',
          },
          {
            guard: 'isRoundOutput',
            target: 'idle',
            actions: [
              'advance',
              'takeOutput',
              { type: 'owe', params: { reason: 'completed' } },
              'markSince',
            ],
            description: 'part C: stop is not tool_use (turn.ended completed)',
          },
          { actions: 'advance', description: 'a stale output changes nothing' },
        ],
        'inference.failed': [
          {
            guard: and(['ofTurn', 'retriesSpent']),
            target: 'idle',
            actions: ['advance', 'takeFailure', 'oweFailed', 'markSince'],
            description: 'row 50: retries spent (turn.ended failed)',
          },
          {
            guard: 'ofTurn',
            actions: ['advance', 'takeFailure'],
            description: 'row 50: a failed attempt stays inferring until retry_in passes',
          },
          { actions: 'advance' },
        ],
        'compaction.requested': [
          {
            guard: 'ofTurn',
            target: 'compacting',
            actions: ['advance', 'requestCompaction', 'markSince'],
            description: '§6.3: the prompt reached compact_at',
          },
          { actions: 'advance' },
        ],
      },
    },
    compacting: {
      description: 'The earlier context is being summarised (§6.3, row 51).',
      on: {
        ...common,
        'compaction.completed': [
          {
            guard: 'isCompactionAnswer',
            target: 'inferring',
            actions: ['advance', 'completeCompaction', 'markSince'],
            description: '§6.3: later prompts start from the summary',
          },
          { actions: 'advance' },
        ],
      },
    },
    awaiting_tools: {
      description: 'The calls of the round are out (part C).',
      on: {
        ...common,
        'invoke.allowed': [
          {
            guard: 'isOpenCall',
            actions: ['advance', 'allowCall'],
            description: 'the authorizer allowed a call: out at its target until its deadline',
          },
          { actions: 'advance' },
        ],
        'invoke.denied': answerTransitions,
        'invoke.completed': answerTransitions,
      },
    },
    ended: {
      description: 'The session is archived (row 61): phase `ended`.',
      type: 'final',
    },
  },
});
