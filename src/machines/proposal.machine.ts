/**
 * The proposal machine: interface table 3.2 with decisions rows 28–30 and 92–94, and the
 * owner's decline (RFC 8628 §3.5 `access_denied`). Every
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
 * `updateInstall` are no-ops here; the actor host provides the real ones. The named
 * actions, guards and delays the chart uses are declared in `proposal.setup.ts`.
 */
import { not } from 'xstate';
import { installEffect, proposal, type FixedOutcome } from './proposal.setup.ts';
import { initialContext } from './proposal.types.ts';

export * from './proposal.types.ts';

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
/** Consent and decline: a caller who is not an owner changes nothing. */
const notOwner = { guard: not('isOwner'), actions: say('not_owner'), description: OWNERS_ONLY };
const BAD_SECRET = 'row 30: the poll secret does not match (401)';
const ONE_PER_POST = '2.8: a request is minted per POST, never submitted twice';

/** The proposal machine of interface table 3.2; see the file header for time and effects. */
export const proposalMachine = proposal.createMachine({
  id: 'proposal',
  initial: 'none',
  context: initialContext,
  meta: {
    title: 'Proposal',
    source: 'interface 3.2; decisions rows 28–30, 92–94; RFC 8628 §3.5 (decline)',
    invariants: [
      'Every event is answered by exactly one `proposal.answered` emission.',
      'A proposal lapses ten minutes after submission: from then on consent answers `not_found` and the poll `expired_token` (3.2, row 30).',
      'A proposal is granted at most once: nothing leaves `granted`, and consent there answers `already_granted` with the same install (row 92).',
      'A caller who is not an owner is answered `not_owner` in every state and changes nothing (§5 rule 5, row 94).',
      'The install effects run only on `pending → granted`: `createInstall` for a new app, `updateInstall` (install and key kept, receipt key null) for an update.',
      'Until expiry every poll of a granted proposal answers the same receipt; afterwards the key is forgotten (row 30).',
      'An owner may decline a pending proposal: from then on every poll with its secret answers `access_denied` (RFC 8628 §3.5), a consent answers `declined` (409), and no install effect runs.',
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
          notOwner,
          { actions: say('not_found'), description: '§7: no such request (404)' },
        ],
        'consent.declined': [
          notOwner,
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
        'consent.declined': [
          lapse,
          notOwner,
          {
            target: 'declined',
            actions: ['see', say('declined')],
            description: 'the owner turns it down; the vendor’s poll answers access_denied',
          },
        ],
        'consent.given': [
          lapse,
          notOwner,
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
          notOwner,
          {
            actions: 'answerAlreadyGranted',
            description: '3.2, row 92: answered as already granted (409, with the install)',
          },
        ],
        'consent.declined': [
          notOwner,
          {
            actions: 'answerAlreadyGranted',
            description: 'a granted request cannot be declined (409, with the install)',
          },
        ],
      },
    },
    declined: {
      description: 'An owner declined; the poll answers access_denied until the request is gone.',
      on: {
        'proposal.submitted': { actions: say('exists'), description: ONE_PER_POST },
        'poll.requested': [
          { guard: not('isSecret'), actions: say('bad_secret'), description: BAD_SECRET },
          { actions: say('access_denied'), description: 'RFC 8628 §3.5: the owner declined' },
        ],
        'consent.given': [
          notOwner,
          { actions: say('declined'), description: 'declined already: consent is refused (409)' },
        ],
        'consent.declined': [
          notOwner,
          { actions: say('declined'), description: 'declining again answers the same (200)' },
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
          notOwner,
          { actions: say('not_found'), description: '3.2: consent answers no such request (404)' },
        ],
        'consent.declined': [
          notOwner,
          { actions: say('not_found'), description: '3.2: a lapsed request is gone (404)' },
        ],
      },
    },
  },
});
