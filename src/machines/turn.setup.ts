/**
 * The named parts of the turn machine (`turn.machine.ts`), declared with XState's
 * `setup()`: the context updates each landed record makes, the guards the chart asks, and
 * the helpers they share. The chart itself, the states and transitions of decisions
 * part C, is in `turn.machine.ts`; this file holds the vocabulary it is written in. Pure,
 * like the chart: no storage, clock or randomness; time is the records' `at`.
 */
import { assign, setup } from 'xstate';
import {
  noAttempts,
  type ModelUsage,
  type Owed,
  type PendingCall,
  type TurnContext,
  type TurnEndReason,
  type TurnEvent,
} from './turn.types.ts';
import { emptyQueue, enqueue, queued } from './turn.queue.ts';

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

/** The turn machine's types, actions and guards, for `turn.machine.ts`. */
export const turn = setup({
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
