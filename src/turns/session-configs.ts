/**
 * What a driver needs of a session's configuration, kept across driver runs in one
 * process: the pinned document (§3.5, immutable under its hash, so kept once read) and
 * the authorizer built from it (its schemas compile once, not once per turn), reused for
 * a minute, after which the connections' catalogs it reads are looked at again.
 */
import type { Clock } from '../clock.ts';
import type { Authorizer } from '../policy/authorizer.ts';
import type { SessionConfigValue, SessionValue } from '../resources/types.ts';
import type { SessionDirectory } from '../sessions/directory.ts';
import type { ControlStore } from '../storage/control-store.ts';
import { sessionAuthorizer } from './tools.ts';

/** How long an authorizer is reused before the catalogs it reads are looked at again. */
const AUTHORIZER_TTL_MS = 60_000;
/** Configurations kept; past this the memory starts afresh. */
const REMEMBERED = 1000;

export class SessionConfigs {
  readonly #deps: {
    readonly control: ControlStore;
    readonly directory: SessionDirectory;
    readonly clock: Clock;
  };
  /** Pinned documents by tenant and configuration hash. */
  readonly #documents = new Map<string, SessionConfigValue>();
  /** Authorizers by tenant, configuration and executor, with when they were built. */
  readonly #authorizers = new Map<
    string,
    { readonly authorizer: Authorizer; readonly at: number }
  >();

  constructor(deps: {
    readonly control: ControlStore;
    readonly directory: SessionDirectory;
    readonly clock: Clock;
  }) {
    this.#deps = deps;
  }

  /** The session's pinned document, or null when it is gone. */
  async pinned(session: SessionValue): Promise<SessionConfigValue | null> {
    const key = `${session.tenant}\n${session.config}`;
    const cached = this.#documents.get(key);
    if (cached !== undefined) return cached;
    const pinned = await this.#deps.directory.pinned(session);
    if (pinned === null) return null;
    if (this.#documents.size >= REMEMBERED) this.#documents.clear();
    this.#documents.set(key, pinned);
    return pinned;
  }

  /** The authorizer of the session's configuration for `executor`. */
  async authorizer(
    session: SessionValue,
    pinned: SessionConfigValue,
    executor: string | null,
  ): Promise<Authorizer> {
    const key = `${session.tenant}\n${session.config}\n${executor ?? ''}`;
    const now = this.#deps.clock.now();
    const cached = this.#authorizers.get(key);
    if (cached !== undefined && now - cached.at < AUTHORIZER_TTL_MS) return cached.authorizer;
    const authorizer = await sessionAuthorizer(
      this.#deps.control,
      session.tenant,
      pinned,
      executor,
    );
    if (this.#authorizers.size >= REMEMBERED) this.#authorizers.clear();
    this.#authorizers.set(key, { authorizer, at: now });
    return authorizer;
  }
}
