/**
 * The connection as a hosted actor: `connectionMachine` (interface 3.3) with its probes
 * provided (`src/connections/effects.ts`), answering each command with where the machine
 * came to rest. Actor ids are `<tenant>/<name>` (`connectionActorId`; a tenant id never
 * holds a `/`).
 *
 * Its state is the connection resource itself (kind `connection`, with its `secret`
 * index), the one `GET /connections` reads, not an actor snapshot: `load` restores the
 * machine from the stored value (`resolveState`), `save` writes the resting context back
 * with the version check, and deletes it once the machine rests in `none`. A command that
 * changes nothing (an unchanged PUT, a refused callback) writes nothing. After a write the
 * OAuth state no link uses any more goes: another endpoint's, or all of it once the
 * connection is gone or links without OAuth.
 *
 * A probe that fails fails the command through the `EffectSink`, so nothing is saved
 * (§7 "nothing changed") and the caller gets the probe's own error. Probes run again when
 * a commit loses a race and the command is retried; they only read the server and keep
 * OAuth state by endpoint, so running twice is harmless.
 */
import { Conflict, Unavailable } from '../errors.ts';
import {
  connectionMachine,
  type ConnectionContext,
  type RestingState,
} from '../machines/connection.machine.ts';
import type { ConnectionRef } from '../mcp/oauth-state.ts';
import { scoped } from '../resources/types.ts';
import { connectionLogic, type ConnectionEffectDeps } from '../connections/effects.ts';
import { contextOf, indexOf, valueOf } from '../connections/stored.ts';
import type { ActorType, StateStore } from './actor-type.ts';

/** The namespace of connection actors in the host (their state is the resource). */
export const CONNECTION_ACTOR = 'connection';

/** Where the machine came to rest after one command. */
export interface Rested {
  readonly state: RestingState;
  readonly context: ConnectionContext;
}

/** The actor id of a tenant's connection. */
export function connectionActorId(ref: ConnectionRef): string {
  return scoped(ref.tenant, ref.connection);
}

function refOf(id: string): ConnectionRef {
  const at = id.indexOf('/');
  if (at <= 0) throw new Error(`${id} is not a connection actor id`);
  return { tenant: id.slice(0, at), connection: id.slice(at + 1) };
}

const RESTING: ReadonlySet<unknown> = new Set<RestingState>(['none', 'linked', 'authorizing']);

function isResting(value: unknown): value is RestingState {
  return RESTING.has(value);
}

/** The resting state and context of a persisted snapshot. */
function restingOf(snapshot: unknown): Rested {
  const { value, context } = snapshot as { value?: unknown; context?: ConnectionContext };
  if (!isResting(value) || context === undefined) {
    throw new Error(`the connection machine is not at rest (${JSON.stringify(value)})`);
  }
  return { state: value, context };
}

/** The connection resource as the machine's state. */
function connectionState(deps: ConnectionEffectDeps): StateStore {
  const { control, oauth } = deps;
  return {
    async load(id) {
      const ref = refOf(id);
      const stored = await control.get('connection', ref.tenant, ref.connection);
      if (stored === null) return null;
      const snapshot = connectionMachine.resolveState({
        value: stored.value.state,
        context: contextOf(stored.value, deps.baseUrl),
      });
      return {
        version: stored.version,
        snapshot: connectionMachine.getPersistedSnapshot(snapshot),
      };
    },

    async save(id, snapshot, expect) {
      const ref = refOf(id);
      const { state, context } = restingOf(snapshot);
      const value = valueOf(ref.connection, state, context);
      const stored = await control.get('connection', ref.tenant, ref.connection);
      if ((stored?.version ?? 0) !== expect) {
        throw new Conflict('version_conflict', `connection ${id} moved on from version ${expect}`);
      }
      if (value === null) {
        if (stored === null) return 0;
        const gone = { kind: 'connection', scope: ref.tenant, id: ref.connection } as const;
        await control.write([{ op: 'delete', ...gone, expect }]);
        await oauth.forgetConnection(ref);
        return 0;
      }
      // A command that changed nothing (a refusal, a repeated event) writes nothing.
      if (stored !== null && JSON.stringify(stored.value) === JSON.stringify(value)) return expect;
      const [written] = await control.write([
        {
          op: 'put',
          kind: 'connection',
          scope: ref.tenant,
          id: ref.connection,
          value,
          expect,
          index: indexOf(ref.tenant, value),
        },
      ]);
      // Credentials no link uses any more go: another endpoint's, or all once OAuth is not used.
      if (value.state === 'linked' && value.auth.kind === 'oauth') {
        await oauth.forgetOtherEndpoints(ref, value.endpoint);
      } else if (value.state === 'linked') {
        await oauth.forgetConnection(ref);
      }
      return written?.version ?? expect + 1;
    },
  };
}

/** The connection actor type, probing through `deps`. */
export function connectionActor(
  deps: ConnectionEffectDeps,
): ActorType<ReturnType<typeof connectionLogic>, Rested> {
  return {
    type: CONNECTION_ACTOR,
    state: connectionState(deps),
    logic: (effect, id) => connectionLogic(deps, refOf(id), effect),
    answer: (snapshot) => {
      const { value, context } = snapshot;
      // Settled means no probe runs, so the machine rests in a leaf state.
      if (!isResting(value)) {
        throw new Unavailable('actor_failed', 'the connection machine did not come to rest');
      }
      return { state: value, context };
    },
  };
}
