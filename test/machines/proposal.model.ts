/**
 * An independent model of interface table 3.2 with decisions rows 29, 30, 92–94 and the
 * owner's decline (RFC 8628 §3.5 `access_denied`), written
 * without XState: every (state, event) cell is a function deciding the rule taken, the
 * next model state and the answer. `Record` without `Partial`, so no cell is left out.
 */
import type { ProposalAnswer } from '../../src/machines/proposal.machine.ts';

export type ModelStateName = 'none' | 'pending' | 'granted' | 'lapsed' | 'declined';
export type ModelEventName =
  'proposal.submitted' | 'poll.requested' | 'consent.given' | 'consent.declined';

export interface ModelState {
  readonly state: ModelStateName;
  readonly update: boolean;
  readonly expires: number;
  readonly interval: number;
  readonly lastPoll: number | null;
  readonly install: string | null;
  readonly key: string | null;
}

/** The test's own events: what the caller knows, before the edge turns it into data. */
export type ModelEvent =
  | { readonly type: 'proposal.submitted'; readonly now: number; readonly install: string | null }
  | { readonly type: 'poll.requested'; readonly now: number; readonly secretOk: boolean }
  | {
      readonly type: 'consent.given';
      readonly now: number;
      readonly owner: boolean;
      readonly resolves: boolean;
      readonly fits: boolean;
      readonly install: string;
      readonly key: string;
    }
  | { readonly type: 'consent.declined'; readonly now: number; readonly owner: boolean };

export interface Outcome {
  /** The documented rule the cell applied, for coverage. */
  readonly rule: string;
  readonly next: ModelState;
  readonly answer: ProposalAnswer;
}

type Cell = (m: ModelState, e: ModelEvent) => Outcome;

export const REQUEST = 'req';
export const VENDOR = 'vendor-hash';
const LIFETIME = 10 * 60 * 1000;
const INTERVAL = 5000;

export const initialModel: ModelState = {
  state: 'none',
  update: false,
  expires: 0,
  interval: INTERVAL,
  lastPoll: null,
  install: null,
  key: null,
};

const stay = (rule: string, m: ModelState, answer: ProposalAnswer): Outcome => ({
  rule,
  next: m,
  answer,
});

const consentAsNonOwner = (prefix: string, m: ModelState, e: ModelEvent, then: Cell): Outcome =>
  (e.type === 'consent.given' || e.type === 'consent.declined') && !e.owner
    ? stay(`${prefix}.${e.type === 'consent.given' ? 'consent' : 'decline'}.not_owner`, m, {
        outcome: 'not_owner',
      })
    : then(m, e);

const pollWithSecret = (prefix: string, m: ModelState, e: ModelEvent, then: Cell): Outcome =>
  e.type === 'poll.requested' && !e.secretOk
    ? stay(`${prefix}.poll.bad_secret`, m, { outcome: 'bad_secret' })
    : then(m, e);

/** Table 3.2 with the decisions rows, one cell per (state, event). */
export const table: Record<ModelStateName, Record<ModelEventName, Cell>> = {
  none: {
    'proposal.submitted': (m, e) => {
      const install = e.type === 'proposal.submitted' ? e.install : null;
      const next = {
        ...m,
        state: 'pending',
        update: install !== null,
        install,
        expires: e.now + LIFETIME,
      } as const;
      return {
        rule: 'none.submit',
        next,
        answer: {
          outcome: 'proposed',
          request: REQUEST,
          vendor: VENDOR,
          expires: next.expires,
          interval: INTERVAL,
        },
      };
    },
    'poll.requested': (m) => stay('none.poll.bad_secret', m, { outcome: 'bad_secret' }),
    'consent.given': (m, e) =>
      consentAsNonOwner('none', m, e, () =>
        stay('none.consent.not_found', m, { outcome: 'not_found' }),
      ),
    'consent.declined': (m, e) =>
      consentAsNonOwner('none', m, e, () =>
        stay('none.decline.not_found', m, { outcome: 'not_found' }),
      ),
  },
  pending: {
    'proposal.submitted': (m) => stay('pending.submit.exists', m, { outcome: 'exists' }),
    'poll.requested': (m, e) =>
      pollWithSecret('pending', m, e, () => {
        if (m.lastPoll !== null && e.now - m.lastPoll < m.interval) {
          const interval = m.interval + 5000;
          return stay(
            'pending.poll.slow_down',
            { ...m, interval, lastPoll: e.now },
            { outcome: 'slow_down', interval },
          );
        }
        return stay(
          'pending.poll.pending',
          { ...m, lastPoll: e.now },
          { outcome: 'authorization_pending' },
        );
      }),
    'consent.given': (m, e) =>
      consentAsNonOwner('pending', m, e, () => {
        if (e.type !== 'consent.given') throw new Error('unreachable');
        if (!e.resolves) return stay('pending.consent.unresolved', m, { outcome: 'unresolved' });
        if (!e.fits) return stay('pending.consent.unfit', m, { outcome: 'unfit' });
        const next: ModelState = m.update
          ? { ...m, state: 'granted' }
          : { ...m, state: 'granted', install: e.install, key: e.key };
        return {
          rule: m.update ? 'pending.consent.grant_update' : 'pending.consent.grant_new',
          next,
          answer: { outcome: 'granted', install: next.install ?? '' },
        };
      }),
    'consent.declined': (m, e) =>
      consentAsNonOwner('pending', m, e, () => ({
        rule: 'pending.decline',
        next: { ...m, state: 'declined' },
        answer: { outcome: 'declined' },
      })),
  },
  granted: {
    'proposal.submitted': (m) => stay('granted.submit.exists', m, { outcome: 'exists' }),
    'poll.requested': (m, e) =>
      pollWithSecret('granted', m, e, () =>
        e.now >= m.expires
          ? stay('granted.poll.expired', { ...m, key: null }, { outcome: 'expired_token' })
          : stay('granted.poll.receipt', m, {
              outcome: 'receipt',
              install: m.install ?? '',
              key: m.key,
              vendor: VENDOR,
            }),
      ),
    'consent.given': (m, e) =>
      consentAsNonOwner('granted', m, e, () =>
        stay('granted.consent.already_granted', m, {
          outcome: 'already_granted',
          install: m.install ?? '',
        }),
      ),
    'consent.declined': (m, e) =>
      consentAsNonOwner('granted', m, e, () =>
        stay('granted.decline.already_granted', m, {
          outcome: 'already_granted',
          install: m.install ?? '',
        }),
      ),
  },
  lapsed: {
    'proposal.submitted': (m) => stay('lapsed.submit.exists', m, { outcome: 'exists' }),
    'poll.requested': (m, e) =>
      pollWithSecret('lapsed', m, e, () =>
        stay('lapsed.poll.expired', m, { outcome: 'expired_token' }),
      ),
    'consent.given': (m, e) =>
      consentAsNonOwner('lapsed', m, e, () =>
        stay('lapsed.consent.not_found', m, { outcome: 'not_found' }),
      ),
    'consent.declined': (m, e) =>
      consentAsNonOwner('lapsed', m, e, () =>
        stay('lapsed.decline.not_found', m, { outcome: 'not_found' }),
      ),
  },
  // Declined is final: the poll is told to stop whatever the clock says.
  declined: {
    'proposal.submitted': (m) => stay('declined.submit.exists', m, { outcome: 'exists' }),
    'poll.requested': (m, e) =>
      pollWithSecret('declined', m, e, () =>
        stay('declined.poll.access_denied', m, { outcome: 'access_denied' }),
      ),
    'consent.given': (m, e) =>
      consentAsNonOwner('declined', m, e, () =>
        stay('declined.consent.declined', m, { outcome: 'declined' }),
      ),
    'consent.declined': (m, e) =>
      consentAsNonOwner('declined', m, e, () =>
        stay('declined.decline.again', m, { outcome: 'declined' }),
      ),
  },
};

/** Table 3.2 row 3: a pending proposal whose ten minutes are up is lapsed. */
export function settle(m: ModelState, now: number): { state: ModelState; lapsed: boolean } {
  return m.state === 'pending' && now >= m.expires
    ? { state: { ...m, state: 'lapsed' }, lapsed: true }
    : { state: m, lapsed: false };
}

/** Applies one event: time first, then the cell. */
export function step(m: ModelState, e: ModelEvent): Outcome & { lapsed: boolean } {
  const settled = settle(m, e.now);
  return { ...table[settled.state.state][e.type](settled.state, e), lapsed: settled.lapsed };
}

/** Every rule the model documents; the test asserts each is taken. */
export const RULES: readonly string[] = [
  'none.submit',
  'none.poll.bad_secret',
  'none.consent.not_owner',
  'none.consent.not_found',
  'none.decline.not_owner',
  'none.decline.not_found',
  'pending.submit.exists',
  'pending.poll.bad_secret',
  'pending.poll.slow_down',
  'pending.poll.pending',
  'pending.consent.not_owner',
  'pending.consent.unresolved',
  'pending.consent.unfit',
  'pending.consent.grant_update',
  'pending.consent.grant_new',
  'pending.decline',
  'pending.decline.not_owner',
  'pending.lapse',
  'granted.submit.exists',
  'granted.poll.bad_secret',
  'granted.poll.expired',
  'granted.poll.receipt',
  'granted.consent.not_owner',
  'granted.consent.already_granted',
  'granted.decline.not_owner',
  'granted.decline.already_granted',
  'lapsed.submit.exists',
  'lapsed.poll.bad_secret',
  'lapsed.poll.expired',
  'lapsed.consent.not_owner',
  'lapsed.consent.not_found',
  'lapsed.decline.not_owner',
  'lapsed.decline.not_found',
  'declined.submit.exists',
  'declined.poll.bad_secret',
  'declined.poll.access_denied',
  'declined.consent.not_owner',
  'declined.consent.declined',
  'declined.decline.not_owner',
  'declined.decline.again',
];
