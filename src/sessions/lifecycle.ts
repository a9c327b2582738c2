/**
 * Opening and archiving sessions (interface 3.1 rows 1 and 3, 3.5, 4.1, 4.4; decisions
 * rows 5, 13, 31, 38, 47, 60, 61, part B) through the hosted session actor
 * (`src/actors/session.actor.ts`, whose header says why appends do not go through it).
 *
 * Open: pin the install's composed document (§3.5), check the connected catalogs (row 47,
 * before any actor exists, so a refused open leaves nothing behind), mint the id (row 5),
 * then `session.requested` to the actor, whose effect lands `session.opened` at cursor 1
 * (producer `service:session`) and files the directory record with `opened` = its `at`.
 *
 * Archive: `archive.requested` to the actor; its effect lands `session.archived {by}` as
 * the final record through `LogStore.archive` (atomic with refusing every later append)
 * and marks the directory. A repeat answers the same without landing anything (row 60).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ActorHost } from '../actors/actor-host.ts';
import { sessionActor, type ArchiveCommand, type OpenCommand } from '../actors/session.actor.ts';
import type { Entropy } from '../clock.ts';
import { Conflict, Forbidden, NotFound, Unavailable } from '../errors.ts';
import type { ArchivedBy, SessionAnswer } from '../machines/session.machine.ts';
import type { InstallValue, SessionValue } from '../resources/types.ts';
import {
  RECORD_KIND_VERSION,
  type SessionArchivedBody,
  type SessionOpenedBody,
} from '../schemas/record-kinds.ts';
import type { OpenSessionBody, SessionAnswer as OpenAnswer } from '../schemas/sessions.ts';
import type { Versioned } from '../storage/control-store.ts';
import type { LogStore, PendingRecord } from '../storage/log-store.ts';
import { checkCatalogs, type CatalogCheckOptions } from './catalog-check.ts';
import type { SessionDirectory } from './directory.ts';
import { mintSessionId, subjectOf } from './ids.ts';
import { pinConfig, sessionTools, type PinnedConfig } from './pinning.ts';
import type { SessionTokens } from './tokens.ts';

/** Part B: the producer of the records the session itself lands. */
export const SESSION_PRODUCER = 'service:session';

/** What the open effect lands and files. */
interface Opening {
  readonly session: SessionValue;
  readonly pinned: PinnedConfig;
  readonly body: SessionOpenedBody;
}

/** Who archives: the install, a console user (`console:<user>`), or the service. */
export type Archiver =
  | { readonly by: 'install' | 'idle' | 'install_deleted' }
  | { readonly by: 'console'; readonly user: string };

interface Archiving {
  readonly session: SessionValue;
  /** The `by` of `session.archived` (part B). */
  readonly by: string;
}

export interface LifecycleOptions {
  readonly host: ActorHost;
  readonly logStore: LogStore;
  readonly directory: SessionDirectory;
  readonly tokens: SessionTokens;
  readonly entropy: Entropy;
  /** The HMAC key of session ids (`deriveSessionIdKey`). */
  readonly idKey: Buffer;
  readonly catalogs: CatalogCheckOptions;
  /** The turn runtime: what it owes a session opening and one being archived. */
  readonly turns: {
    /** Row 61: starts the idle archive's clock for a session about to open. */
    opening(session: string): Promise<void>;
    /** Row 60: ends a session's turn in flight before it is archived. */
    endForArchive(session: string): Promise<void>;
    /** Row 53: the session was archived; its last records are counted now. */
    archived(session: string): void;
  };
}

/** A record of the session itself, as the log store lands it. */
function serviceRecord(name: string, body: unknown): PendingRecord {
  const text = canonicalize(body);
  if (text === undefined) throw new Error(`${name} has no canonical JSON form`);
  return {
    kind: { name, version: RECORD_KIND_VERSION },
    producer: SESSION_PRODUCER,
    to: null,
    idem: null,
    body: text,
  };
}

/** The machine's answer as the caller sees it: nothing for success, else its error. */
function settle(answer: SessionAnswer, expected: SessionAnswer['outcome']): void {
  if (answer.outcome === expected) return;
  switch (answer.outcome) {
    case 'not_found':
      throw new NotFound('session_not_found', 'no such session');
    case 'forbidden':
      throw new Forbidden('not_owner', 'only an owner of the tenant archives its sessions');
    case 'exists':
      throw new Conflict('session_exists', 'a session with this id exists already');
    default:
      throw new Unavailable('actor_failed', `the session answered ${answer.outcome}`);
  }
}

/** Opens and archives sessions through the session actor. */
export class SessionLifecycle {
  readonly #options: LifecycleOptions;
  readonly #actor;

  constructor(options: LifecycleOptions) {
    this.#options = options;
    this.#actor = sessionActor<Opening, Archiving>({
      landOpened: (opening) => this.#landOpened(opening),
      cancelTurn: (_params, archiving) => options.turns.endForArchive(archiving.session.id),
      landArchived: (_params, archiving) => this.#landArchived(archiving),
    });
  }

  /** 4.1 `POST /sessions` after the request is checked: the new session and its token (2.9). */
  async open(
    install: Versioned<InstallValue>,
    principal: string,
    request: OpenSessionBody,
  ): Promise<OpenAnswer> {
    const { id: installId, tenant } = install.value;
    const pinned = pinConfig(install);
    await checkCatalogs(this.#options.catalogs, tenant, pinned.document.tenant.extra_tools);
    const { id, nonce } = mintSessionId(this.#options.idKey, installId, this.#options.entropy);
    const params = request.params ?? {};
    const opening: Opening = {
      session: {
        id,
        install: installId,
        tenant,
        nonce,
        subject: subjectOf(installId, principal),
        opened: 0,
        config: pinned.hash,
        archived: false,
        archivedAt: null,
      },
      pinned,
      body: {
        install: installId,
        principal,
        instructions: request.instructions ?? null,
        executor: request.executor ?? null,
        tools: sessionTools(pinned.document),
        params: {
          max_tokens: params.max_tokens ?? null,
          stop: params.stop ?? [],
          temperature: params.temperature ?? null,
          top_p: params.top_p ?? null,
        },
        rounds: request.rounds,
        config: pinned.hash,
      },
    };
    const command: OpenCommand<Opening> = {
      type: 'session.requested',
      install: installId,
      principal: true,
      valid: true,
      catalogs: 'unchanged',
      opening,
    };
    // Before it lands: a session that opens is always on the runtime's due index, so it is
    // archived as idle even if no message ever comes and this process dies now.
    await this.#options.turns.opening(id);
    settle(await this.#options.host.send(this.#actor, id, command), 'opened');
    const token = await this.#options.tokens.mint({
      session: id,
      producer: `principal:${principal}`,
      tenant,
      // The token ends when the key it was opened with is rotated.
      installKeyHash: install.value.keyHash ?? undefined,
    });
    return { session: id, token: token.token, expires: token.expires };
  }

  /** Row 60: archives `session` (idempotent); answers the session as archived. */
  async archive(session: SessionValue, archiver: Archiver): Promise<void> {
    const by: ArchivedBy = archiver.by;
    const command: ArchiveCommand<Archiving> = {
      type: 'archive.requested',
      by,
      authorized: true,
      archiving: {
        session,
        by: archiver.by === 'console' ? `console:${archiver.user}` : archiver.by,
      },
    };
    settle(await this.#options.host.send(this.#actor, session.id, command), 'archived');
    this.#options.turns.archived(session.id);
  }

  async #landOpened(opening: Opening): Promise<void> {
    const { session, body } = opening;
    const record = serviceRecord('session.opened', body);
    // Under a store key: a rerun of the effect replays the record instead of landing it twice.
    const landed = await this.#options.logStore.append({
      stream: session.id,
      records: [record],
      key: 'svc:open',
      fingerprint: createHash('sha256').update(record.body).digest('hex'),
    });
    const opened = landed.records[0]?.envelope.at ?? 0;
    if ((await this.#options.directory.get(session.id)) !== null) return;
    await this.#options.directory.file({ ...session, opened }, opening.pinned);
  }

  async #landArchived(archiving: Archiving): Promise<void> {
    const body: SessionArchivedBody = { by: archiving.by };
    const final = await this.#options.logStore.archive(
      archiving.session.id,
      serviceRecord('session.archived', body),
    );
    await this.#options.directory.markArchived(archiving.session, final.envelope.at);
  }
}
