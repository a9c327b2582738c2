/**
 * A tenant's connections (2.12, 3.3, 4.3, 4.4; decisions rows 41 to 47 and 78): every
 * route runs the connection machine against the stored connection and stores where it
 * came to rest.
 *
 * One command: read the connection (its version), restore the machine from it, send the
 * event, wait while it probes the server, then write what it rests as, expecting the
 * version read. A probe that fails leaves the machine where it was, so nothing is written
 * (§7 "nothing changed") and its failure is the answer. Of two commands racing on one
 * connection the second write fails with `version_conflict` (409).
 */
import { createActor, waitFor } from 'xstate';
import { Conflict, InvalidRequest, NotFound, ServiceError } from '../errors.ts';
import type {
  ConnectionContext,
  ConnectionEvent,
  RestingState,
} from '../machines/connection.machine.ts';
import type { ConnectionRef } from '../mcp/oauth-state.ts';
import { INDEX, scoped, type ConnectionValue, type InstallValue } from '../resources/types.ts';
import type { WriteOutcome } from '../schemas/common.ts';
import type { Connection, PutConnectionBody } from '../schemas/connections.ts';
import type { ControlStore, Versioned } from '../storage/control-store.ts';
import { connectionLogic, type ConnectionEffectDeps } from './effects.ts';
import { resolveReturnTo } from './return-to.ts';
import { contextOf, indexOf, valueOf, wireOf } from './stored.ts';

/** What the service is built from. */
export interface ConnectionServiceDeps extends ConnectionEffectDeps {
  /** Origins besides `BASE_URL`'s a `return_to` may point at (row 44). */
  readonly returnOrigins?: readonly string[];
}

/** 4.3: the answer of `PUT /connections/{id}`. */
export interface PutAnswer {
  readonly connection: Connection;
  readonly outcome: WriteOutcome;
  readonly authorize?: string;
}

type Stored = Versioned<ConnectionValue>;

/** The one connection name `GET /connections/{id}` cannot serve (row 45's callback path). */
const CALLBACK_NAME = 'callback';

/** Where the machine came to rest after one event. */
interface Rested {
  readonly state: RestingState;
  readonly context: ConnectionContext;
}

/** The connection commands over the control store. */
export class ConnectionService {
  readonly #deps: ConnectionServiceDeps;
  readonly #store: ControlStore;

  constructor(deps: ConnectionServiceDeps) {
    this.#deps = deps;
    this.#store = deps.control;
  }

  /** The stored connection, or null. */
  read(ref: ConnectionRef): Promise<Stored | null> {
    return this.#store.get<ConnectionValue>('connection', ref.tenant, ref.connection);
  }

  /** The stored connection. @throws NotFound `connection_not_found` (§7). */
  async require(ref: ConnectionRef): Promise<Stored> {
    const stored = await this.read(ref);
    if (stored === null) {
      throw new NotFound(
        'connection_not_found',
        `the tenant owns no connection named ${ref.connection}`,
      );
    }
    return stored;
  }

  /**
   * `PUT /connections/{id}` (3.3 rows 1, 2 and 4; row 44 checks). Nothing is written
   * before discovery succeeds, nor when the outcome is `unchanged` (row 46).
   */
  async put(tenant: string, id: string, body: PutConnectionBody): Promise<PutAnswer> {
    if (body.name !== id) {
      throw new InvalidRequest('name_mismatch', `body.name must equal the path id ${id}`, {
        field: 'body.name',
        reason: 'must equal the path id',
      });
    }
    if (id === CALLBACK_NAME) {
      // GET /connections/callback is the OAuth callback: it could never read this one back.
      throw new InvalidRequest('reserved_name', `${id} is reserved for the OAuth callback`, {
        field: 'body.name',
        reason: 'is reserved',
      });
    }
    if (
      body.credential !== null &&
      (await this.#store.get('secret', tenant, body.credential)) === null
    ) {
      throw new InvalidRequest(
        'unknown_secret',
        `the tenant holds no secret named ${body.credential}`,
        {
          field: 'body.credential',
          reason: 'names no secret the tenant holds',
        },
      );
    }
    const config = {
      endpoint: body.endpoint,
      credential: body.credential,
      result_limit: body.result_limit,
      timeout: body.timeout,
      return_to: resolveReturnTo(body.return_to, {
        baseUrl: this.#deps.baseUrl,
        ...(this.#deps.returnOrigins === undefined ? {} : { origins: this.#deps.returnOrigins }),
      }),
    };
    const ref = { tenant, connection: id };
    const stored = await this.read(ref);
    const rested = await this.#run(ref, stored, { type: 'link.requested', config });
    const outcome = rested.context.outcome ?? 'replaced';
    const value = outcome === 'unchanged' ? stored?.value : await this.#save(ref, stored, rested);
    if (value === undefined || value === null) throw new Error('a put rests as a connection');
    return {
      connection: wireOf(value),
      outcome,
      ...(value.state === 'authorizing' && value.authorize !== null
        ? { authorize: value.authorize }
        : {}),
    };
  }

  /** `GET /connections`: the tenant's connections by name. */
  async list(tenant: string): Promise<Connection[]> {
    const stored = await this.#store.list<ConnectionValue>('connection', tenant);
    return stored.map((resource) => wireOf(resource.value));
  }

  /** Runs one event on a stored connection and stores the result (for the other commands). */
  async apply(ref: ConnectionRef, stored: Stored | null, event: ConnectionEvent) {
    const rested = await this.#run(ref, stored, event);
    return this.#save(ref, stored, rested);
  }

  /** `DELETE /connections/{id}` (row 78): refused while installs reference it. */
  async remove(ref: ConnectionRef): Promise<void> {
    const stored = await this.require(ref);
    const installs = (
      await this.#store.findByIndex<InstallValue>(
        'install',
        INDEX.connection,
        scoped(ref.tenant, ref.connection),
      )
    )
      .filter((install) => install.scope === ref.tenant && !install.value.deleted)
      .map((install) => install.id);
    if (installs.length > 0) {
      throw new Conflict(
        'connection_in_use',
        `connection ${ref.connection} is still used by installs ${installs.join(', ')}`,
        { extensions: { installs } },
      );
    }
    await this.apply(ref, stored, { type: 'unlink.requested' });
    await this.#deps.oauth.forgetConnection(ref);
  }

  /** Restores the machine from `stored`, sends `event` and waits until it rests. */
  async #run(ref: ConnectionRef, stored: Stored | null, event: ConnectionEvent): Promise<Rested> {
    const logic = connectionLogic(this.#deps, ref);
    const snapshot = logic.resolveState({
      value: stored?.value.state ?? 'none',
      context: contextOf(stored?.value ?? null, this.#deps.baseUrl),
    });
    const actor = createActor(logic, { snapshot });
    actor.start();
    try {
      actor.send(event);
      const rested = await waitFor(actor, (s) => !s.matches('probing'));
      if (rested.context.failure !== null) throw asError(rested.context.failure);
      if (typeof rested.value !== 'string') throw new Error('the machine rests in a leaf state');
      return { state: rested.value, context: rested.context };
    } finally {
      actor.stop();
    }
  }

  /** Writes where the machine rests, expecting the version it was restored from. */
  async #save(ref: ConnectionRef, stored: Stored | null, rested: Rested) {
    const value = valueOf(ref.connection, rested.state, rested.context);
    if (value === null) {
      if (stored !== null) {
        await this.#store.write([
          {
            op: 'delete',
            kind: 'connection',
            scope: ref.tenant,
            id: ref.connection,
            expect: stored.version,
          },
        ]);
      }
      return null;
    }
    // A command that changed nothing (a refusal, a repeated event) writes nothing.
    if (stored !== null && JSON.stringify(stored.value) === JSON.stringify(value)) return value;
    await this.#store.write([
      {
        op: 'put',
        kind: 'connection',
        scope: ref.tenant,
        id: ref.connection,
        value,
        expect: stored?.version ?? 0,
        index: indexOf(ref.tenant, value),
      },
    ]);
    // Credentials no link uses any more go: another endpoint's, or all once OAuth is not used.
    if (value.state === 'linked' && value.auth.kind === 'oauth') {
      await this.#deps.oauth.forgetOtherEndpoints(ref, value.endpoint);
    } else if (value.state === 'linked') {
      await this.#deps.oauth.forgetConnection(ref);
    }
    return value;
  }
}

/** A probe's failure as the error to answer. */
function asError(failure: unknown): Error {
  if (failure instanceof ServiceError || failure instanceof Error) return failure;
  return new Error(String(failure));
}
