/**
 * The proposal machine: interface table 3.2 with decisions rows 28–30 and 92–94. Every
 * cell of state × event is decided; each event emits exactly one `proposal.answered`,
 * which the edge maps to its HTTP answer.
 *
 * Time. Every event carries `now` (ms, from the caller's injected clock), and every
 * transition out of `pending` first asks `hasLapsed` (`now >= expires`): a lapsed proposal
 * moves to `lapsed` and the same event is delivered again there, so a proposal restored
 * from storage after its lifetime answers exactly as one that stayed in memory. A live
 * actor also holds an `after: lifetime` timer (delay `expires - seen`, `seen` being the
 * last `now` it was given), so under a running clock (real, or XState's `SimulatedClock`)
 * it lapses on time without an event. The actor host runs machines with an inert clock.
 *
 * Purity. No storage, HTTP, clock or randomness: the edge checks the document, hashes the
 * poll secret, mints install ids and keys, decides ownership, resolution and fit (row 93)
 * and passes the outcomes in as event data. The effects `createInstall` and
 * `updateInstall` are no-ops here; the actor host provides the real ones.
 */
import { assign, emit, not, raise, setup } from 'xstate';
import {
  initialContext,
  PROPOSAL_LIFETIME_MS,
  SLOW_DOWN_STEP_MS,
  type InstallEffect,
  type ProposalAnswer,
  type ProposalContext,
  type ProposalEvent,
} from './proposal.types.ts';

export * from './proposal.types.ts';

/** Answers that carry nothing but their outcome. */
type FixedOutcome = Exclude<
  ProposalAnswer['outcome'],
  'proposed' | 'granted' | 'already_granted' | 'receipt' | 'slow_down'
>;

interface Answered {
  type: 'proposal.answered';
  answer: ProposalAnswer;
}

const answered = (answer: ProposalAnswer): Answered => ({ type: 'proposal.answered', answer });

const proposal = setup({
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
    isOwner: ({ event }) => event.type === 'consent.given' && event.owner,
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

const installEffect = ({
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

/** A lapsed pending proposal first moves to `lapsed`, which then answers the event. */
const lapse = {
  guard: 'hasLapsed',
  target: 'lapsed',
  actions: 'redeliver',
  description: 'the ten minutes are up: lapse first, then `lapsed` answers the event',
} as const;

/** Answers a fixed outcome (the generated table shows it as `answer(<outcome>)`). */
const say = (outcome: FixedOutcome) => ({ type: 'answer', params: { outcome } }) as const;

const OWNERS_ONLY = '§5 rule 5, row 94: owners only, checked first (403, row 83)';
const BAD_SECRET = 'row 30: the poll secret does not match (401)';
const ONE_PER_POST = '2.8: a request is minted per POST, never submitted twice';

/** The proposal machine of interface table 3.2; see the file header for time and effects. */
export const proposalMachine = proposal.createMachine({
  id: 'proposal',
  initial: 'none',
  context: initialContext,
  meta: {
    title: 'Proposal',
    source: 'interface 3.2; decisions rows 28–30, 92–94',
    invariants: [
      'Every event is answered by exactly one `proposal.answered` emission.',
      'A proposal lapses ten minutes after submission: from then on consent answers `not_found` and the poll `expired_token` (3.2, row 30).',
      'A proposal is granted at most once: nothing leaves `granted`, and consent there answers `already_granted` with the same install (row 92).',
      'A caller who is not an owner is answered `not_owner` in every state and changes nothing (§5 rule 5, row 94).',
      'The install effects run only on `pending → granted`: `createInstall` for a new app, `updateInstall` (install and key kept, receipt key null) for an update.',
      'Until expiry every poll of a granted proposal answers the same receipt; afterwards the key is forgotten (row 30).',
      'A poll sooner than the interval after the previous one answers `slow_down` and adds 5000 ms to the interval for every later poll (row 30).',
    ],
  },
  states: {
    none: {
      description: 'No proposal by this request yet.',
      on: {
        'proposal.submitted': {
          target: 'pending',
          description:
            'POST /appdoc or POST /installs/{id}/proposals; the edge checked the document',
          actions: ['see', 'open', 'answerProposed'],
        },
        'poll.requested': {
          actions: say('bad_secret'),
          description: 'row 30: no proposal holds this secret (401)',
        },
        'consent.given': [
          { guard: not('isOwner'), actions: say('not_owner'), description: OWNERS_ONLY },
          { actions: say('not_found'), description: '§7: no such request (404)' },
        ],
      },
    },
    pending: {
      description: 'Waiting for an owner’s consent, for ten minutes.',
      after: { lifetime: { target: 'lapsed', description: 'ten minutes elapse' } },
      on: {
        'proposal.submitted': [lapse, { actions: say('exists'), description: ONE_PER_POST }],
        'poll.requested': [
          lapse,
          { guard: not('isSecret'), actions: say('bad_secret'), description: BAD_SECRET },
          {
            guard: 'isTooFast',
            actions: ['slowDown', 'notePoll', 'answerSlowDown'],
            description: 'row 30: sooner than the interval after the previous poll',
          },
          {
            actions: ['notePoll', say('authorization_pending')],
            description: 'row 30: no consent yet',
          },
        ],
        'consent.given': [
          lapse,
          { guard: not('isOwner'), actions: say('not_owner'), description: OWNERS_ONLY },
          {
            guard: not('resolves'),
            actions: say('unresolved'),
            description: 'row 93: a selected reference is not the tenant’s (400)',
          },
          {
            guard: not('fits'),
            actions: say('unfit'),
            description: 'row 93: the tenant config does not fit the vendor’s (400)',
          },
          {
            guard: 'isUpdate',
            target: 'granted',
            description: '3.2, row 94: the existing install is kept with its key',
            actions: [
              'see',
              'grant',
              { type: 'updateInstall', params: installEffect },
              'answerGranted',
            ],
          },
          {
            target: 'granted',
            description: '3.2: an install and its key are created',
            actions: [
              'see',
              'grant',
              { type: 'createInstall', params: installEffect },
              'answerGranted',
            ],
          },
        ],
      },
    },
    granted: {
      description: 'Consented; the install exists and the poll answers its receipt until expiry.',
      after: { lifetime: { actions: 'forgetKey', description: 'the receipt expires' } },
      on: {
        'proposal.submitted': { actions: say('exists'), description: ONE_PER_POST },
        'poll.requested': [
          { guard: not('isSecret'), actions: say('bad_secret'), description: BAD_SECRET },
          {
            guard: 'hasLapsed',
            actions: ['forgetKey', say('expired_token')],
            description: 'row 30: the receipt lives as long as the proposal',
          },
          { actions: 'answerReceipt', description: 'row 30: the same receipt until expiry' },
        ],
        'consent.given': [
          { guard: not('isOwner'), actions: say('not_owner'), description: OWNERS_ONLY },
          {
            actions: 'answerAlreadyGranted',
            description: '3.2, row 92: answered as already granted (409, with the install)',
          },
        ],
      },
    },
    lapsed: {
      description: 'Ten minutes passed without consent; the request is gone.',
      on: {
        'proposal.submitted': { actions: say('exists'), description: ONE_PER_POST },
        'poll.requested': [
          { guard: not('isSecret'), actions: say('bad_secret'), description: BAD_SECRET },
          { actions: say('expired_token'), description: 'row 30: the proposal lapsed' },
        ],
        'consent.given': [
          { guard: not('isOwner'), actions: say('not_owner'), description: OWNERS_ONLY },
          { actions: say('not_found'), description: '3.2: consent answers no such request (404)' },
        ],
      },
    },
  },
});
