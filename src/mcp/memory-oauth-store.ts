/**
 * An `OAuthStateStore` held in process memory.
 *
 * A real, small implementation of the port (not a test double): it keeps the same
 * promises as the control-store-backed one will (single-use `takePending`, values copied
 * in and out so a caller cannot change what is stored). It suits one process that may
 * forget every link on restart, e.g. the tests and a development run; the service's
 * deployments back the port with the control store's 'oauth_state' resources.
 */
import type {
  ConnectionRef,
  CredentialScope,
  OAuthStateStore,
  PendingAuthorization,
  StoredClient,
  StoredTokens,
} from './oauth-state.ts';

/** Keeps a connection's credentials and pending authorizations in maps. */
export class MemoryOAuthStateStore implements OAuthStateStore {
  readonly #clients = new Map<string, StoredClient>();
  readonly #tokens = new Map<string, StoredTokens>();
  readonly #pending = new Map<string, PendingAuthorization>();

  loadClient(ref: ConnectionRef): Promise<StoredClient | undefined> {
    return Promise.resolve(copy(this.#clients.get(key(ref))));
  }

  saveClient(ref: ConnectionRef, client: StoredClient): Promise<void> {
    this.#clients.set(key(ref), structuredClone(client));
    return Promise.resolve();
  }

  loadTokens(ref: ConnectionRef): Promise<StoredTokens | undefined> {
    return Promise.resolve(copy(this.#tokens.get(key(ref))));
  }

  saveTokens(ref: ConnectionRef, tokens: StoredTokens): Promise<void> {
    this.#tokens.set(key(ref), structuredClone(tokens));
    return Promise.resolve();
  }

  forget(ref: ConnectionRef, scope: CredentialScope): Promise<void> {
    if (scope !== 'tokens') this.#clients.delete(key(ref));
    if (scope !== 'client') this.#tokens.delete(key(ref));
    return Promise.resolve();
  }

  savePending(pending: PendingAuthorization): Promise<void> {
    this.#pending.set(pending.state, structuredClone(pending));
    return Promise.resolve();
  }

  /** Single use: the handle is gone once taken, whether or not it had expired. */
  takePending(state: string): Promise<PendingAuthorization | undefined> {
    const pending = this.#pending.get(state);
    this.#pending.delete(state);
    return Promise.resolve(pending);
  }

  /** Drops handles that expired before `now`, so abandoned authorizations do not pile up. */
  sweep(now: number): number {
    let dropped = 0;
    for (const [state, pending] of this.#pending) {
      if (pending.expires <= now) {
        this.#pending.delete(state);
        dropped += 1;
      }
    }
    return dropped;
  }
}

/** A tenant id and a connection name joined so no two pairs collide. */
function key(ref: ConnectionRef): string {
  return JSON.stringify([ref.tenant, ref.connection]);
}

function copy<T>(value: T | undefined): T | undefined {
  return value === undefined ? undefined : structuredClone(value);
}
