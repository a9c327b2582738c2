/**
 * Context, events and answers of the session machine (interface 3.1, decisions rows 35,
 * 60, 61, 83, part C). Kept beside `session.machine.ts` so routes can import the shapes
 * without the machine.
 */

/** Who archives (row 61): the install, a console owner, the idle sweep, an install delete. */
export type ArchivedBy = 'install' | 'console' | 'idle' | 'install_deleted';

export interface SessionContext {
  /** The install that opened the session. */
  readonly install: string | null;
  /** `now` of the open (2.11 `opened`). */
  readonly opened: number | null;
  /** Who archived it, once archived (`session.archived` body, part B). */
  readonly archivedBy: ArchivedBy | null;
}

/** How the connected catalogs compare with the kept ones at open (row 47). */
export type CatalogCheck = 'unchanged' | 'changed' | 'unreadable';

/** How the token's idempotency key relates to the offered batch (row 9). */
export type KeyCheck = 'free' | 'same' | 'different';

/** The events of table 3.1; `now` is absolute ms from the caller's clock. */
export type SessionEvent =
  | {
      /** POST /sessions (4.1), with the edge's checks as data. */
      readonly type: 'session.requested';
      readonly now: number;
      readonly install: string;
      /** The `principal` query parameter was given. */
      readonly principal: boolean;
      /** The body parsed and is within bounds (row 63). */
      readonly valid: boolean;
      readonly catalogs: CatalogCheck;
    }
  | {
      /** POST /sessions/{id}/events (4.2), with the edge's checks as data. */
      readonly type: 'records.offered';
      readonly now: number;
      /** The session token attaches to this session (§5 rule 2). */
      readonly attaches: boolean;
      /** The write filter accepts every record of the batch (part D, row 85). */
      readonly accepted: boolean;
      readonly key: KeyCheck;
    }
  | {
      /** POST /sessions/{id}/archive, POST /console/sessions/{id}/archive, or the service. */
      readonly type: 'archive.requested';
      readonly now: number;
      readonly by: ArchivedBy;
      /** Row 60: the owning install key, or a console owner; always true for the service. */
      readonly authorized: boolean;
    };

/** Every answer the machine gives; the edge maps each to its HTTP answer or error. */
export type SessionAnswer =
  /** 2.9 (the edge mints id and token). */
  | { readonly outcome: 'opened' }
  /** §7: 400, no principal. */
  | { readonly outcome: 'no_principal' }
  /** §7: 400, the body is invalid. */
  | { readonly outcome: 'invalid_body' }
  /** Row 47: 409 `catalog_changed`. */
  | { readonly outcome: 'catalog_changed' }
  /** §7: 502, a connected catalog could not be read. */
  | { readonly outcome: 'catalog_unreadable' }
  /** A session id is minted per POST, so a second open is a conflict. */
  | { readonly outcome: 'exists' }
  /** 3.1: the batch may land; the log store stamps the cursors. */
  | { readonly outcome: 'accepted' }
  /** Row 9: an identical resend; the original envelopes answer, nothing lands. */
  | { readonly outcome: 'replayed' }
  /** §7: 403, the token does not attach. */
  | { readonly outcome: 'not_attached' }
  /** Row 85: 403 `filter_refused`. */
  | { readonly outcome: 'filter_refused' }
  /** Row 9: 409 `idempotency_conflict`. */
  | { readonly outcome: 'idempotency_conflict' }
  /** 3.1: 409 `session_archived`, nothing lands again. */
  | { readonly outcome: 'session_archived' }
  /** §7: 404, no such session (or, row 60, not the owning install). */
  | { readonly outcome: 'not_found' }
  /** Row 60: 403, a console caller who is not an owner. */
  | { readonly outcome: 'forbidden' }
  /** Row 60: archived, now or before (a repeat answers the same, 200). */
  | { readonly outcome: 'archived'; readonly by: ArchivedBy };

/** Parameters of the `cancelTurn` and `landArchived` effects. */
export interface ArchiveEffect {
  readonly by: ArchivedBy;
}

/** The context before the session is opened. */
export const initialSessionContext: SessionContext = {
  install: null,
  opened: null,
  archivedBy: null,
};
