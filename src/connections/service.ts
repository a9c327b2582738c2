/**
 * A tenant's connections (2.12, 3.3, 4.3, 4.4; decisions rows 41 to 47 and 78): every
 * command is an event to the connection's actor in the process's actor host
 * (`src/actors/connection.actor.ts`), whose state is the stored connection.
 *
 * One command: the caller reads the connection (its version) and decides on it; the host
 * restores the machine from the stored connection, sends the event, waits while it probes
 * the server, then writes what it rests as, expecting that version. A probe that fails
 * fails the command, so nothing is written (§7 "nothing changed") and its failure is the
 * answer. Commands to one connection are serialised by the host; of two racing on one
 * version from two processes the later one is refused with `version_conflict` (409).
 */
import type { ActorHost } from '../actors/actor-host.ts';
import { connectionActor, connectionActorId, type Rested } from '../actors/connection.actor.ts';
import { Conflict, InvalidRequest, NotFound } from '../errors.ts';
import type { ConnectionEvent } from '../machines/connection.machine.ts';
import type { ConnectionRef } from '../mcp/oauth-state.ts';
import { INDEX, scoped, type ConnectionValue } from '../resources/types.ts';
import type { WriteOutcome } from '../schemas/common.ts';
import type { Connection, PutConnectionBody } from '../schemas/connections.ts';
import type { ControlStore, Versioned } from '../storage/control-store.ts';
import type { ConnectionEffectDeps } from './effects.ts';
import { resolveReturnTo } from './return-to.ts';
import { valueOf, wireOf } from './stored.ts';

/** What the service is built from. */
export interface ConnectionServiceDeps extends ConnectionEffectDeps {
  /** The process's actor host (`src/services.ts`). */
  readonly host: ActorHost;
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

/** The connection commands, each through the connection actor of the actor host. */
export class ConnectionService {
  readonly #deps: ConnectionServiceDeps;
  readonly #store: ControlStore;
  readonly #actor: ReturnType<typeof connectionActor>;

  constructor(deps: ConnectionServiceDeps) {
    this.#deps = deps;
    this.#store = deps.control;
    this.#actor = connectionActor(deps);
  }

  /** The stored connection, or null. */
  read(ref: ConnectionRef): Promise<Stored | null> {
    return this.#store.get('connection', ref.tenant, ref.connection);
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
    const rested = await this.#send(ref, stored, { type: 'link.requested', config });
    const outcome = rested.context.outcome ?? 'replaced';
    // Unchanged (row 46): the context is the stored one, and nothing was written.
    const value = valueOf(id, rested.state, rested.context);
    if (value === null) throw new Error('a put rests as a connection');
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
    const stored = await this.#store.list('connection', tenant);
    return stored.map((resource) => wireOf(resource.value));
  }

  /**
   * Runs one event on the connection as `stored` (read by the caller) and stores the
   * result (for the other commands); answers the connection, null once it is gone.
   * @throws Conflict `version_conflict` when it moved on from `stored` meanwhile.
   */
  async apply(
    ref: ConnectionRef,
    stored: Stored | null,
    event: ConnectionEvent,
  ): Promise<ConnectionValue | null> {
    const rested = await this.#send(ref, stored, event);
    return valueOf(ref.connection, rested.state, rested.context);
  }

  /** `DELETE /connections/{id}` (row 78): refused while installs reference it. */
  async remove(ref: ConnectionRef): Promise<void> {
    const stored = await this.require(ref);
    const installs = (
      await this.#store.findByIndex('install', INDEX.connection, scoped(ref.tenant, ref.connection))
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
    // The actor's save deletes the connection and forgets its OAuth state.
    await this.apply(ref, stored, { type: 'unlink.requested' });
  }

  /** Sends `event` to the connection's actor, expecting it as `stored`; answers where it rests. */
  #send(ref: ConnectionRef, stored: Stored | null, event: ConnectionEvent): Promise<Rested> {
    return this.#deps.host.send(this.#actor, connectionActorId(ref), event, {
      expect: stored?.version ?? 0,
    });
  }
}
