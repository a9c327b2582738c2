/**
 * What a driver needs of a session's configuration (`forDriver`): its inference option
 * and provider, its tenant's sealing key, and what is kept across driver runs in one
 * process: the pinned document (§3.5, immutable under its hash, so kept once read) and
 * the authorizer built from it (its schemas compile once, not once per turn), reused for
 * a minute, after which the connections' catalogs it reads are looked at again.
 */
import type { Clock } from '../clock.ts';
import type { InferenceProvider } from '../inference/provider.ts';
import type { Authorizer } from '../policy/authorizer.ts';
import type { SessionConfigValue, SessionValue } from '../resources/types.ts';
import type { SessionDirectory } from '../sessions/directory.ts';
import { tenantSealKey } from '../sessions/sealing.ts';
import type { ControlStore } from '../storage/control-store.ts';
import type { DriverSession } from './driver-deps.ts';
import type { SessionState } from './session-state.ts';
import { sessionAuthorizer } from './tools.ts';

/** How long an authorizer is reused before the catalogs it reads are looked at again. */
const AUTHORIZER_TTL_MS = 60_000;
/** Configurations kept; past this the memory starts afresh. */
const REMEMBERED = 1000;

export interface SessionConfigsDeps {
  readonly control: ControlStore;
  readonly directory: SessionDirectory;
  readonly clock: Clock;
  /** Providers by the `provider` of an inference option (2.13). */
  readonly providers: Readonly<Record<string, InferenceProvider>>;
  /** The root key the tenants' sealing keys derive from. */
  readonly sealKey: Buffer;
}

export class SessionConfigs {
  readonly #deps: SessionConfigsDeps;
  /** Pinned documents by tenant and configuration hash. */
  readonly #documents = new Map<string, SessionConfigValue>();
  /** Authorizers by tenant, configuration and executor, with when they were built. */
  readonly #authorizers = new Map<
    string,
    { readonly authorizer: Authorizer; readonly at: number }
  >();

  constructor(deps: SessionConfigsDeps) {
    this.#deps = deps;
  }

  /**
   * What a driver of `session` works with, its state from `caughtUp` (its executor picks
   * the authorizer); or why it cannot work now: no usable inference option (deleted, or a
   * provider this build lacks), or no pinned configuration. `caughtUp` is called only for
   * a session that can run: one that cannot does not read its log.
   */
  async forDriver(
    session: SessionValue,
    caughtUp: () => Promise<SessionState>,
  ): Promise<DriverSession | 'no_option' | 'no_configuration'> {
    const pinned = await this.pinned(session);
    const optionName = pinned?.tenant.inference;
    const option =
      optionName === undefined
        ? null
        : await this.#deps.control.get('inference', session.tenant, optionName);
    const provider = option === null ? undefined : this.#deps.providers[option.value.provider];
    if (option === null || provider === undefined) return 'no_option';
    if (pinned === null) return 'no_configuration';
    const state = await caughtUp();
    return {
      state,
      tenant: session.tenant,
      tenantKey: tenantSealKey(this.#deps.sealKey, session.tenant),
      option: option.value,
      provider,
      authorizer: await this.authorizer(session, pinned, state.context.opened.executor),
    };
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
