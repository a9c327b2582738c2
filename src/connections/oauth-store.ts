/**
 * The OAuth state of connections in the control store (`oauth_state` resources), sealed
 * at rest: the `OAuthStateStore` port of `src/mcp/oauth-state.ts` for deployments.
 *
 * Every stored value is a client registration (with its client secret), a token set or a
 * pending authorization (with its PKCE verifier): all secrets. Each is JSON sealed with
 * AES-256-GCM (`secret-box.ts`) under its own label and bound to its resource address,
 * so a sealed value copied to another row does not open. Only what lookups need stays in
 * the clear: the connection a resource belongs to (index `connection` = `<tenant>/<name>`)
 * and a pending authorization's expiry.
 *
 * Credentials are kept per endpoint (a short digest of its URL in the id): a PUT that
 * points a connection at another server never sends that server the first one's tokens,
 * and a failed PUT leaves the working credentials alone (§7 "nothing changed").
 *
 * Pending authorizations stand alone (scope `''`), found by their `state` handle; taking
 * one is a delete that expects the version just read, so of two callbacks carrying the
 * same `state` exactly one gets it (row 45: single use).
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { Conflict } from '../errors.ts';
import type {
  ConnectionRef,
  CredentialScope,
  OAuthStateStore,
  PendingAuthorization,
  StoredClient,
  StoredTokens,
} from '../mcp/oauth-state.ts';
import {
  INDEX,
  scoped,
  type SealedOAuthState,
  type SealedPendingAuthorization,
} from '../resources/types.ts';
import type { ControlStore, Versioned } from '../storage/control-store.ts';
import { createSecretBox, type SecretBox, type SecretsKeyring } from '../storage/secret-box.ts';

/** The HKDF label of OAuth state: a new scheme gets a new label. */
const PURPOSE = 'connections/oauth-state/v1';
const KIND = 'oauth_state';
const PENDING_SCOPE = '';

type CredentialKind = 'client' | 'tokens';

/** A short, stable name for an endpoint: the credentials' ids carry it, never the URL. */
function endpointKey(endpoint: string): string {
  return createHash('sha256').update(endpoint).digest('hex').slice(0, 32);
}

function credentialId(kind: CredentialKind, connection: string, endpoint: string): string {
  return `${kind}:${connection}:${endpointKey(endpoint)}`;
}

function pendingId(state: string): string {
  return `pending:${state}`;
}

/** The OAuth state of every connection, sealed in the control store. */
export class ControlOAuthStore {
  readonly #store: ControlStore;
  readonly #box: SecretBox;
  readonly #clock: Clock;

  constructor(store: ControlStore, secretsKey: Buffer | SecretsKeyring, clock: Clock) {
    this.#store = store;
    this.#box = createSecretBox(secretsKey, PURPOSE);
    this.#clock = clock;
  }

  /** The port for flows against `endpoint`: credentials of other endpoints are not seen. */
  forEndpoint(endpoint: string): OAuthStateStore {
    return {
      loadClient: (ref) => this.#load<StoredClient>('client', ref, endpoint),
      saveClient: (ref, client) => this.#save('client', ref, endpoint, client),
      loadTokens: (ref) => this.#load<StoredTokens>('tokens', ref, endpoint),
      saveTokens: (ref, tokens) => this.#save('tokens', ref, endpoint, tokens),
      forget: (ref, scope) => this.#forget(ref, endpoint, scope),
      savePending: (pending) => this.#savePending(pending),
      takePending: (state) => this.takePending(state),
    };
  }

  /**
   * The pending authorization `state` names, without taking it: the callback must know
   * which connection it finishes before it finishes it. Answers expired ones too.
   */
  async peekPending(state: string): Promise<PendingAuthorization | undefined> {
    const stored = await this.#store.get(KIND, PENDING_SCOPE, pendingId(state));
    return stored === null ? undefined : (this.#open(stored) as PendingAuthorization);
  }

  /** Takes the pending authorization `state` names: single use, even under a race. */
  async takePending(state: string): Promise<PendingAuthorization | undefined> {
    const stored = await this.#store.get(KIND, PENDING_SCOPE, pendingId(state));
    if (stored === null) return undefined;
    try {
      await this.#store.write([
        { op: 'delete', kind: KIND, scope: PENDING_SCOPE, id: stored.id, expect: stored.version },
      ]);
    } catch (error) {
      // Another callback took it between our read and our delete.
      if (error instanceof Conflict && error.code === 'version_conflict') return undefined;
      throw error;
    }
    return this.#open(stored) as PendingAuthorization;
  }

  /** Forgets every credential and pending authorization of a connection (row 78). */
  async forgetConnection(ref: ConnectionRef): Promise<void> {
    await this.#deleteWhere(ref, () => true);
  }

  /** Once a link to `endpoint` holds, the credentials kept for other endpoints go. */
  async forgetOtherEndpoints(ref: ConnectionRef, endpoint: string): Promise<void> {
    const kept = new Set([
      credentialId('client', ref.connection, endpoint),
      credentialId('tokens', ref.connection, endpoint),
    ]);
    await this.#deleteWhere(
      ref,
      (resource) => resource.scope === ref.tenant && !kept.has(resource.id),
    );
  }

  async #load<T>(
    kind: CredentialKind,
    ref: ConnectionRef,
    endpoint: string,
  ): Promise<T | undefined> {
    const id = credentialId(kind, ref.connection, endpoint);
    const stored = await this.#store.get(KIND, ref.tenant, id);
    return stored === null ? undefined : (this.#open(stored) as T);
  }

  async #save(
    kind: CredentialKind,
    ref: ConnectionRef,
    endpoint: string,
    value: unknown,
  ): Promise<void> {
    const id = credentialId(kind, ref.connection, endpoint);
    await this.#store.write([
      {
        op: 'put',
        kind: KIND,
        scope: ref.tenant,
        id,
        value: { sealed: this.#seal(value, ref.tenant, id) } satisfies SealedOAuthState,
        expect: null,
        index: { [INDEX.connection]: [scoped(ref.tenant, ref.connection)] },
      },
    ]);
  }

  async #forget(ref: ConnectionRef, endpoint: string, scope: CredentialScope): Promise<void> {
    const kinds: CredentialKind[] = scope === 'all' ? ['client', 'tokens'] : [scope];
    await this.#store.write(
      kinds.map((kind) => ({
        op: 'delete' as const,
        kind: KIND,
        scope: ref.tenant,
        id: credentialId(kind, ref.connection, endpoint),
        expect: null,
      })),
    );
  }

  async #savePending(pending: PendingAuthorization): Promise<void> {
    const ref = { tenant: pending.tenant, connection: pending.connection };
    const id = pendingId(pending.state);
    const value: SealedPendingAuthorization = {
      tenant: pending.tenant,
      connection: pending.connection,
      expires: pending.expires,
      sealed: this.#seal(pending, PENDING_SCOPE, id),
    };
    await this.#store.write([
      {
        op: 'put',
        kind: KIND,
        scope: PENDING_SCOPE,
        id,
        value,
        expect: 0,
        index: { [INDEX.connection]: [scoped(ref.tenant, ref.connection)] },
        // Once expired it can never be used: the retention sweep deletes it.
        expires: pending.expires,
      },
    ]);
    // Abandoned authorizations of this connection do not pile up.
    const now = this.#clock.now();
    await this.#deleteWhere(
      ref,
      (resource) =>
        resource.scope === PENDING_SCOPE &&
        (resource.value as SealedPendingAuthorization).expires <= now,
    );
  }

  async #deleteWhere(
    ref: ConnectionRef,
    matches: (resource: Versioned<unknown>) => boolean,
  ): Promise<void> {
    const found = await this.#store.findByIndex(
      KIND,
      INDEX.connection,
      scoped(ref.tenant, ref.connection),
    );
    const doomed = found.filter(
      (resource) =>
        (resource.scope === ref.tenant || resource.scope === PENDING_SCOPE) && matches(resource),
    );
    if (doomed.length === 0) return;
    await this.#store.write(
      doomed.map((resource) => ({
        op: 'delete' as const,
        kind: KIND,
        scope: resource.scope,
        id: resource.id,
        expect: null,
      })),
    );
  }

  #seal(value: unknown, scope: string, id: string): string {
    return this.#box.seal(JSON.stringify(value), `${scope}/${id}`);
  }

  #open(stored: Versioned<SealedOAuthState>): unknown {
    return JSON.parse(this.#box.open(stored.value.sealed, `${stored.scope}/${stored.id}`));
  }
}
