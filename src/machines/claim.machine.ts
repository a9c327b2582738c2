/**
 * The claim machine: interface table 3.4 with 2.17 and decisions rows 8, 57 and 58, one
 * actor per call (an `invoke.allowed` addressed to an executor, named by its cursor, the
 * claim's `cause`). Every `claim.requested` emits exactly one `claim.answered`, which the
 * edge maps to the 2.17 answer (minting the grant for `granted`) or to 403.
 *
 * No lock (row 57): every claim of an unanswered call is granted, the first `first` and
 * each later one `again`, each with a grant of its own, and each owes an `invoke.claimed`
 * under idem `claim:<cause>:<n>`. The call's slot `call:<cause>` takes one completion, by
 * the executor's grant, `service:mcp` or the service at the deadline; its landing arrives
 * as `call.completed`, after which every claim answers `completed`.
 *
 * Time. Every event carries `now`. The deadline (row 58) is read from it, not from a
 * timer: a claim at or past the call's deadline finds the call answered, and owes the
 * service's timeout completion, the same record the service lands at the deadline (so
 * whichever lands first fills the slot). An actor restored from storage therefore answers
 * exactly as one that stayed in memory, under the host's inert clock.
 *
 * Purity. No storage, HTTP, clock or randomness: the edge reads the cause record, decides
 * whether it is shown to the token (404 otherwise) and addressed to its executor, mints
 * the grant and lands what is owed. The effects `landClaimed` and `landTimeout` are no-ops
 * here; the actor host provides the real ones (idempotent through their idem keys).
 */
import { assign, emit, not, setup } from 'xstate';
import {
  GRANT_GRACE_MS,
  initialClaimContext,
  type ClaimContext,
  type ClaimEvent,
  type ClaimedRecord,
  type ClaimOutcome,
  type TimeoutRecord,
} from './claim.types.ts';

export * from './claim.types.ts';

type Ev<T extends ClaimEvent['type']> = Extract<ClaimEvent, { type: T }>;

interface Answered {
  type: 'claim.answered';
  answer: ClaimOutcome;
}

const answered = (answer: ClaimOutcome): Answered => ({ type: 'claim.answered', answer });

/** The claim event of a transition (only `claim.requested` transitions compute these). */
const claimOf = (event: ClaimEvent): Ev<'claim.requested'> => event as Ev<'claim.requested'>;

/** Row 57: a grant, and its `invoke.claimed`, lapse thirty seconds after the call's timeout. */
const grantExpiry = (event: Ev<'claim.requested'>) =>
  event.now + event.call.timeout + GRANT_GRACE_MS;

const claim = setup({
  types: {
    context: {} as ClaimContext,
    events: {} as ClaimEvent,
    emitted: {} as Answered,
  },
  actions: {
    /** Keeps the call the claim is for (the same on every claim: records do not change). */
    remember: assign(({ event }) => ({ call: claimOf(event).call })),
    /** One more `invoke.claimed` is owed: its `n` (row 8). */
    count: assign({ claims: ({ context }) => context.claims + 1 }),
    /** The slot `call:<cause>` is filled. */
    complete: assign({
      completedBy: ({ event }) => (event.type === 'call.completed' ? event.by : 'service'),
    }),
    /** 3.4 rows 1 and 2: a grant for this claim (the edge mints the credential). */
    answerGranted: emit(({ context, event }) =>
      answered({
        outcome: 'granted',
        attempt: context.claims === 1 ? 'first' : 'again',
        claim: context.claims,
        expires: grantExpiry(claimOf(event)),
      }),
    ),
    /** 3.4 row 3: nothing left to do. */
    answerCompleted: emit(answered({ outcome: 'completed' })),
    /** Part D: shown, but not this executor's call (403). */
    answerForbidden: emit(answered({ outcome: 'forbidden' })),
    /** Effect: land the claim's `invoke.claimed` (part B, row 8); the host provides it. */
    landClaimed: (_, _params: ClaimedRecord) => undefined,
    /** Effect: land the service's timeout completion (row 58); the host provides it. */
    landTimeout: (_, _params: TimeoutRecord) => undefined,
  },
  guards: {
    /** Part D: the cause is an `invoke.allowed` addressed to the claiming executor. */
    isAddressed: ({ event }) => event.type === 'claim.requested' && event.addressed,
    /** Row 58: the call's deadline has come; it is answered by the service's timeout. */
    isPastDeadline: ({ event }) =>
      event.type === 'claim.requested' && event.now >= event.call.deadline,
  },
});

/** The `invoke.claimed` of the claim just counted. */
const claimedRecord = ({
  context,
  event,
}: {
  context: ClaimContext;
  event: ClaimEvent;
}): ClaimedRecord => {
  const e = claimOf(event);
  return {
    kind: { name: 'invoke.claimed', version: 1 },
    idem: `claim:${e.call.cause}:${context.claims}`,
    producer: `executor:${e.executor}`,
    body: {
      cause: e.call.cause,
      call: e.call.call,
      attempt: context.claims === 1 ? 'first' : 'again',
      expires: grantExpiry(e),
    },
  };
};

/** The service's timeout completion of the claimed call (row 58). */
const timeoutRecord = ({ event }: { event: ClaimEvent }): TimeoutRecord => ({
  kind: { name: 'invoke.completed', version: 1 },
  idem: `call:${claimOf(event).call.cause}`,
  body: { ok: false, result: null, error: 'timeout', truncated: false },
});

const NOT_ADDRESSED = 'part D: shown to the token, but not this executor’s invoke.allowed (403)';

/** A claim of a call whose deadline has come: answered by the service's timeout. */
const timedOut = {
  guard: 'isPastDeadline',
  target: 'answered',
  actions: [
    'remember',
    'complete',
    { type: 'landTimeout', params: timeoutRecord },
    'answerCompleted',
  ],
  description: 'row 58: the deadline has come; the service’s timeout completion answers it',
} as const;

/** Any completion fills the slot (row 57: one per call). */
const completed = {
  target: 'answered',
  actions: 'complete',
  description: 'row 57: an invoke.completed landed under call:<cause>',
} as const;

/** The claim machine of interface table 3.4; see the file header for time and effects. */
export const claimMachine = claim.createMachine({
  id: 'claim',
  initial: 'unclaimed',
  context: initialClaimContext,
  meta: {
    title: 'Claim',
    source: 'interface 3.4, 2.17; decisions rows 8, 57, 58, parts B and D',
    invariants: [
      'Every `claim.requested` is answered by exactly one `claim.answered` emission; `call.completed` answers nothing.',
      'A claim by an executor the call is not addressed to answers `forbidden` in every state and changes nothing (part D).',
      'The first granted claim answers `first`, every later one before a completion `again`: no lock, each with its own grant (row 57).',
      'Each granted claim owes exactly one `invoke.claimed` under idem `claim:<cause>:<n>`, n = 1, 2, … without gaps, expiring `now + timeout + 30 s` (rows 8, 57).',
      'Once the call is answered every addressed claim answers `completed`, owes nothing, and nothing leaves `answered` (3.4 row 3).',
      'A claim at or past the deadline of an unanswered call owes the service’s timeout completion under `call:<cause>` and answers `completed` (row 58).',
    ],
  },
  states: {
    unclaimed: {
      description: 'The call was never claimed (3.4 “record never claimed”).',
      on: {
        'claim.requested': [
          { guard: not('isAddressed'), actions: 'answerForbidden', description: NOT_ADDRESSED },
          timedOut,
          {
            target: 'claimed',
            actions: [
              'remember',
              'count',
              { type: 'landClaimed', params: claimedRecord },
              'answerGranted',
            ],
            description: '3.4 row 1: attempt first, a grant returned',
          },
        ],
        'call.completed': completed,
      },
    },
    claimed: {
      description: 'Claimed, no completion behind it (3.4).',
      on: {
        'claim.requested': [
          { guard: not('isAddressed'), actions: 'answerForbidden', description: NOT_ADDRESSED },
          timedOut,
          {
            actions: [
              'remember',
              'count',
              { type: 'landClaimed', params: claimedRecord },
              'answerGranted',
            ],
            description: '3.4 row 2, row 57: attempt again, a new grant (no lock)',
          },
        ],
        'call.completed': completed,
      },
    },
    answered: {
      description:
        'The call’s one invoke.completed landed: by the grant, service:mcp or the timeout.',
      on: {
        'claim.requested': [
          { guard: not('isAddressed'), actions: 'answerForbidden', description: NOT_ADDRESSED },
          {
            actions: 'answerCompleted',
            description: '3.4 row 3: nothing left to do; credential and expires null',
          },
        ],
        'call.completed': {
          description: 'the slot holds one completion; a resend of it changes nothing',
        },
      },
    },
  },
});
