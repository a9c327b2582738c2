/**
 * The session directory in the control store (interface 2.11, 4.1, 4.4; decisions rows
 * 37 to 40, 75): the `session` record each session route looks a session up by, and the
 * `session_row` rows the listings page through.
 *
 * Listings. The control store lists one (kind, scope) by ascending id, so each session
 * files one row under every listing it appears in (`install:<install>`,
 * `subject:<install>:<subject>`, `tenant:<tenant>`), with an id that sorts newest first:
 * `<9999999999999 − opened ms, 13 digits>.<session id>`. A page is one list call with
 * `after` = the previous page's last row id, so paging is stable while sessions open.
 * The continuation served as `next` (row 39) is that id in base64url: opaque to callers,
 * and anything that does not decode to one is a 400 (row 40).
 *
 * Opening files the record, every row and the pinned document in one atomic batch;
 * archiving rewrites the record and the rows, so a listing never needs the log store.
 */
import { InvalidRequest } from '../errors.ts';
import type { SessionConfigValue, SessionRowValue, SessionValue } from '../resources/types.ts';
import type { ControlStore, ControlWrite, Versioned } from '../storage/control-store.ts';
import type { PinnedConfig } from './pinning.ts';

/** The largest `opened` a sort key holds: 13 digits of ms (the year 2286). */
const LAST_MS = 9_999_999_999_999;
const ROW_ID = /^\d{13}\.[0-9a-f]{72}$/;

/** Which listing a page is read from. */
export type Listing =
  { readonly install: string; readonly subject?: string } | { readonly tenant: string };

/** One page of a listing, newest first. */
export interface DirectoryPage {
  readonly rows: readonly SessionRowValue[];
  /** The continuation of the next page (row 39), null on the last page. */
  readonly next: string | null;
}

function scopeOf(listing: Listing): string {
  if ('tenant' in listing) return `tenant:${listing.tenant}`;
  return listing.subject === undefined
    ? `install:${listing.install}`
    : `subject:${listing.install}:${listing.subject}`;
}

/** The scopes a session's rows are filed under. */
function scopesOf(session: SessionValue): string[] {
  const scopes = [scopeOf({ install: session.install }), scopeOf({ tenant: session.tenant })];
  if (session.subject !== null) {
    scopes.push(scopeOf({ install: session.install, subject: session.subject }));
  }
  return scopes;
}

function rowId(session: SessionValue): string {
  return `${String(LAST_MS - session.opened).padStart(13, '0')}.${session.id}`;
}

function rowOf(session: SessionValue): SessionRowValue {
  return {
    id: session.id,
    install: session.install,
    opened: session.opened,
    subject: session.subject,
    archived: session.archived,
  };
}

/** The record and every row of a session, as one batch of puts. */
function sessionWrites(session: SessionValue, expect: number | null): ControlWrite[] {
  const id = rowId(session);
  const row = rowOf(session);
  return [
    { op: 'put', kind: 'session', scope: '', id: session.id, value: session, expect },
    ...scopesOf(session).map((scope): ControlWrite => ({
      op: 'put',
      kind: 'session_row',
      scope,
      id,
      value: row,
      expect,
    })),
  ];
}

/** Row 40: the row id a continuation names, or a 400. */
function decodeAfter(after: string): string {
  const id = Buffer.from(after, 'base64url').toString('utf8');
  if (!ROW_ID.test(id)) {
    throw new InvalidRequest(
      'invalid_request',
      'query.after is not a continuation of this listing',
      {
        field: 'query.after',
        reason: 'must be the `next` of a previous page',
      },
    );
  }
  return id;
}

/** The session directory over a control store. */
export class SessionDirectory {
  readonly #store: ControlStore;

  constructor(store: ControlStore) {
    this.#store = store;
  }

  /** A session's record, or null when no session has this id. */
  async get(id: string): Promise<Versioned<SessionValue> | null> {
    return this.#store.get('session', '', id);
  }

  /** Files a new session: its pinned document, its record and its rows, atomically. */
  async file(session: SessionValue, pinned: PinnedConfig): Promise<void> {
    const config: SessionConfigValue = pinned.document;
    await this.#store.write([
      // Content-addressed: every session pinning the same document writes the same value.
      {
        op: 'put',
        kind: 'session_config',
        scope: session.tenant,
        id: pinned.hash,
        value: config,
        expect: null,
      },
      ...sessionWrites(session, 0),
    ]);
  }

  /** Marks a session archived at `at` in its record and every row (idempotent). */
  async markArchived(session: SessionValue, at: number): Promise<SessionValue> {
    if (session.archived) return session;
    const archived: SessionValue = { ...session, archived: true, archivedAt: at };
    await this.#store.write(sessionWrites(archived, null));
    return archived;
  }

  /** The composed document a session pinned (§3.5). */
  async pinned(session: SessionValue): Promise<SessionConfigValue | null> {
    const config = await this.#store.get('session_config', session.tenant, session.config);
    return config?.value ?? null;
  }

  /** One page of a listing, newest first (rows 39, 40). */
  async page(listing: Listing, after: string | undefined, limit: number): Promise<DirectoryPage> {
    const rows = await this.#store.list('session_row', scopeOf(listing), {
      ...(after === undefined ? {} : { after: decodeAfter(after) }),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      rows: page.map((row) => row.value),
      next:
        rows.length > limit && last !== undefined
          ? Buffer.from(last.id).toString('base64url')
          : null,
    };
  }
}
