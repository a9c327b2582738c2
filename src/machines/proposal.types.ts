/**
 * Context (with its constants), events and answers of the proposal machine (interface 3.2, decisions rows
 * 28–30, 92–94, and the owner's decline). Kept beside `proposal.machine.ts` so routes can import the shapes
 * without the machine.
 */

/** What the proposal machine remembers; `null` fields are unset before submission. */
export interface ProposalContext {
  /** The request id (2.8), also the actor id. */
  readonly request: string | null;
  /** The vendor config content hash (2.8, row 21). */
  readonly vendor: string | null;
  /** SHA-256 hex of the poll secret: the secret itself is issued once and never kept (2.8). */
  readonly secret: string | null;
  /** The install: the one being updated, or the one consent created. */
  readonly install: string | null;
  /** True for POST /installs/{id}/proposals: consent keeps the install and its key. */
  readonly update: boolean;
  /** The new install key, kept for the poll receipt until expiry; null for updates (row 30). */
  readonly key: string | null;
  /** Absolute ms: submission + ten minutes (row 29). */
  readonly expires: number;
  /** Current poll interval in ms (row 29, grows by `slow_down`). */
  readonly interval: number;
  /** `now` of the previous poll, for `slow_down`. */
  readonly lastPoll: number | null;
  /** The latest `now` the machine was given. */
  readonly seen: number;
}

/** Table 3.2 and §8: a proposal lives ten minutes. */
export const PROPOSAL_LIFETIME_MS = 600_000;
/** Row 29: the poll interval starts at five seconds. */
export const POLL_INTERVAL_MS = 5_000;
/** Row 30 (RFC 8628 §3.5): `slow_down` adds five seconds to the interval. */
export const SLOW_DOWN_STEP_MS = 5_000;

/** The context before submission. */
export const initialContext: ProposalContext = {
  request: null,
  vendor: null,
  secret: null,
  install: null,
  update: false,
  key: null,
  expires: 0,
  interval: POLL_INTERVAL_MS,
  lastPoll: null,
  seen: 0,
};

/** What the edge mints for a consent; the machine only passes it on to the effect. */
export interface ProposalGrant {
  /** A fresh install id, used when the proposal is not an update. */
  readonly install: string;
  /** A fresh install key (`ik_…`, row 32), used when the proposal is not an update. */
  readonly key: string;
  /** The consenting tenant. */
  readonly tenant: string;
  /** The tenant config (2.6) as checked by the edge; opaque to the machine. */
  readonly config: unknown;
}

/** The events of table 3.2; `now` is absolute ms from the caller's clock. */
export type ProposalEvent =
  | {
      /** POST /appdoc or POST /installs/{id}/proposals with a valid document. */
      readonly type: 'proposal.submitted';
      readonly now: number;
      readonly request: string;
      readonly vendor: string;
      /** SHA-256 hex of the freshly issued poll secret. */
      readonly secret: string;
      /** The install being updated, or null for a new app. */
      readonly install: string | null;
    }
  | {
      /** POST /consent/token with `Bearer <poll_secret>` (row 30). */
      readonly type: 'poll.requested';
      readonly now: number;
      /** SHA-256 hex of the presented poll secret. */
      readonly secret: string;
    }
  | {
      /** POST /consent/{request} (4.3), with the edge's checks as data. */
      readonly type: 'consent.given';
      readonly now: number;
      /** The caller owns the tenant (§5 rule 5; for an update, the install's tenant, row 94). */
      readonly owner: boolean;
      /** Every selected reference belongs to the tenant (row 93 "resolves"). */
      readonly resolves: boolean;
      /** The tenant config fits the vendor config (row 93 "fits"). */
      readonly fits: boolean;
      readonly grant: ProposalGrant;
    }
  | {
      /** POST /consent/{request}/decline: an owner turns the proposal down (RFC 8628 §3.5). */
      readonly type: 'consent.declined';
      readonly now: number;
      /** The caller owns the tenant (§5 rule 5; for an update, the install's tenant, row 94). */
      readonly owner: boolean;
    };

/** Every answer the machine gives; the edge maps each to its HTTP answer or error. */
export type ProposalAnswer =
  /** 2.8 (the edge adds poll_secret and consent_url). */
  | {
      readonly outcome: 'proposed';
      readonly request: string;
      readonly vendor: string;
      readonly expires: number;
      readonly interval: number;
    }
  /** A request id is minted per POST, so a second submission is a conflict. */
  | { readonly outcome: 'exists' }
  /** 4.3: consent answers `{install}`. */
  | { readonly outcome: 'granted'; readonly install: string }
  /** Row 92: 409 `already_granted` carrying `install`. */
  | { readonly outcome: 'already_granted'; readonly install: string }
  /** §7: 403, the caller is not an owner. */
  | { readonly outcome: 'not_owner' }
  /** §7: 404, no such request, or it lapsed. */
  | { readonly outcome: 'not_found' }
  /** Row 93: 400, a selected reference is not the tenant's. */
  | { readonly outcome: 'unresolved' }
  /** Row 93: 400, the tenant config does not fit the vendor's. */
  | { readonly outcome: 'unfit' }
  /** Row 30: 401, the poll secret does not match. */
  | { readonly outcome: 'bad_secret' }
  /** Row 30: 400 `authorization_pending`. */
  | { readonly outcome: 'authorization_pending' }
  /** Row 30: 400 `slow_down`, with the interval now in force. */
  | { readonly outcome: 'slow_down'; readonly interval: number }
  /** Row 30: 400 `expired_token`. */
  | { readonly outcome: 'expired_token' }
  /** The owner declined: the decline answers it (200), a consent 409 `declined`. */
  | { readonly outcome: 'declined' }
  /** RFC 8628 §3.5: 400 `access_denied`, the owner declined; the vendor stops polling. */
  | { readonly outcome: 'access_denied' }
  /** Row 30: 200 `{install, key, vendor}`, key null on an update. */
  | {
      readonly outcome: 'receipt';
      readonly install: string;
      readonly key: string | null;
      readonly vendor: string;
    };

/** Parameters of the `createInstall` and `updateInstall` effects. */
export interface InstallEffect {
  readonly request: string;
  readonly vendor: string;
  readonly install: string;
  /** The new key for `createInstall`; null for `updateInstall` (key kept, row 94). */
  readonly key: string | null;
  readonly tenant: string;
  readonly config: unknown;
}
