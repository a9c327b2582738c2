/**
 * The named parts of the proposal machine (`proposal.machine.ts`), declared with XState's
 * `setup()`: its answers, context updates, guards and the `lifetime` delay. The chart
 * itself, the states and transitions of interface table 3.2, is in `proposal.machine.ts`;
 * this file holds the vocabulary it is written in. Pure, like the chart: no storage,
 * HTTP, clock or randomness.
 */
import { assign, emit, raise, setup } from 'xstate';
import {
  PROPOSAL_LIFETIME_MS,
  SLOW_DOWN_STEP_MS,
  type InstallEffect,
  type ProposalAnswer,
  type ProposalContext,
  type ProposalEvent,
} from './proposal.types.ts';

/** Answers that carry nothing but their outcome. */
export type FixedOutcome = Exclude<
  ProposalAnswer['outcome'],
  'proposed' | 'granted' | 'already_granted' | 'receipt' | 'slow_down'
>;

interface Answered {
  type: 'proposal.answered';
  answer: ProposalAnswer;
}

const answered = (answer: ProposalAnswer): Answered => ({ type: 'proposal.answered', answer });

/** The proposal machine's types, actions, guards and delays, for `proposal.machine.ts`. */
export const proposal = setup({
  types: {
    context: {} as ProposalContext,
    events: {} as ProposalEvent,
    emitted: {} as Answered,
  },
  actions: {
    /** Answers a fixed outcome. */
    answer: emit((_, params: { outcome: FixedOutcome }) => answered({ outcome: params.outcome })),
    /** 2.8: the proposal answer of a new proposal. */
    answerProposed: emit(({ context }) =>
      answered({
        outcome: 'proposed',
        request: context.request ?? '',
        vendor: context.vendor ?? '',
        expires: context.expires,
        interval: context.interval,
      }),
    ),
    /** 4.3: consent answers the install it created or kept. */
    answerGranted: emit(({ context }) =>
      answered({ outcome: 'granted', install: context.install ?? '' }),
    ),
    /** Row 92: a repeated consent is a conflict that still names the install. */
    answerAlreadyGranted: emit(({ context }) =>
      answered({ outcome: 'already_granted', install: context.install ?? '' }),
    ),
    /** Row 30: the committed receipt, the same on every poll until expiry. */
    answerReceipt: emit(({ context }) =>
      answered({
        outcome: 'receipt',
        install: context.install ?? '',
        key: context.key,
        vendor: context.vendor ?? '',
      }),
    ),
    /** Row 30: `slow_down` carries the interval now in force. */
    answerSlowDown: emit(({ context }) =>
      answered({ outcome: 'slow_down', interval: context.interval }),
    ),
    /** Hands a lapsed proposal's event on to `lapsed`, which answers it. */
    redeliver: raise(({ event }) => event),
    /** Records the latest `now`, from which the `lifetime` delay is measured. */
    see: assign({ seen: ({ context, event }) => Math.max(context.seen, event.now) }),
    /** Table 3.2 row 1 and row 29: opens the ten-minute lifetime. */
    open: assign(({ event }) =>
      event.type === 'proposal.submitted'
        ? {
            request: event.request,
            vendor: event.vendor,
            secret: event.secret,
            install: event.install,
            update: event.install !== null,
            expires: event.now + PROPOSAL_LIFETIME_MS,
          }
        : {},
    ),
    /** Row 30: remembers when the vendor polled. */
    notePoll: assign({ lastPoll: ({ event }) => event.now }),
    /** Row 30: `slow_down` adds five seconds for this and every later poll. */
    slowDown: assign({ interval: ({ context }) => context.interval + SLOW_DOWN_STEP_MS }),
    /** Table 3.2 row 2: a new proposal takes the minted install and key; an update keeps its own. */
    grant: assign(({ context, event }) =>
      event.type === 'consent.given' && !context.update
        ? { install: event.grant.install, key: event.grant.key }
        : {},
    ),
    /** Row 30: the receipt's key is forgotten once the lifetime ends. */
    forgetKey: assign({ key: null }),
    /** Effect: create the install and its key (table 3.2 row 2); the host provides it. */
    createInstall: (_, _params: InstallEffect) => undefined,
    /** Effect: replace the vendor doc and tenant config, install and key kept (row 94). */
    updateInstall: (_, _params: InstallEffect) => undefined,
  },
  guards: {
    hasLapsed: ({ context, event }) => event.now >= context.expires,
    isSecret: ({ context, event }) =>
      event.type === 'poll.requested' && context.secret !== null && event.secret === context.secret,
    isOwner: ({ event }) =>
      (event.type === 'consent.given' || event.type === 'consent.declined') && event.owner,
    resolves: ({ event }) => event.type === 'consent.given' && event.resolves,
    fits: ({ event }) => event.type === 'consent.given' && event.fits,
    isUpdate: ({ context }) => context.update,
    isTooFast: ({ context, event }) =>
      context.lastPoll !== null && event.now - context.lastPoll < context.interval,
  },
  delays: {
    /** What is left of the ten minutes, measured from the last `now` the machine saw. */
    lifetime: ({ context }) => Math.max(0, context.expires - context.seen),
  },
});

/** The parameters of the install effect a consent runs (table 3.2 row 2, row 94). */
export const installEffect = ({
  context,
  event,
}: {
  context: ProposalContext;
  event: ProposalEvent;
}): InstallEffect => {
  const grant = event.type === 'consent.given' ? event.grant : null;
  return {
    request: context.request ?? '',
    vendor: context.vendor ?? '',
    install: context.update ? (context.install ?? '') : (grant?.install ?? ''),
    key: context.update ? null : (grant?.key ?? null),
    tenant: grant?.tenant ?? '',
    config: grant?.config ?? null,
  };
};
