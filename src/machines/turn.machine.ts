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
 * (a retry's backoff, row 50) are kept as instants derived from them. The named actions
 * and guards the chart uses are declared in `turn.setup.ts`.
 */
import { and, not, or } from 'xstate';
import { turn } from './turn.setup.ts';
import { initialTurnContext } from './turn.types.ts';

export * from './turn.types.ts';
export * from './turn.queue.ts';

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
