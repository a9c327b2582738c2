/**
 * A connection as the control store keeps it (`ConnectionValue`, kind `connection`), as
 * the machine holds it (`ConnectionContext`) and as the wire shows it (2.12): the three
 * forms and the conversions between them.
 *
 * The stored value is the machine's resting context: restoring is `resolveState` with the
 * stored state, storing is reading the context back. The wire form leaves out what the
 * interface does not show (the `return_to` and `authorize` URLs); no form ever holds a
 * token or a secret value (row 41: `auth` names the credential secret, never its value).
 */
import type { ConnectionContext, RestingState } from '../machines/connection.machine.ts';
import { initialConnectionContext } from '../machines/connection.machine.ts';
import { INDEX, scoped, type ConnectionValue } from '../resources/types.ts';
import type { Connection } from '../schemas/connections.ts';
import type { IndexValues } from '../storage/control-store.ts';

/** The machine's context restored from a stored connection (`null`: none). */
export function contextOf(value: ConnectionValue | null, baseUrl: string): ConnectionContext {
  if (value === null) return initialConnectionContext;
  return {
    ...initialConnectionContext,
    config: {
      endpoint: value.endpoint,
      credential: value.auth.kind === 'bearer' ? (value.auth.credential ?? null) : null,
      result_limit: value.result_limit,
      timeout: value.timeout,
      return_to: value.return_to ?? baseUrl,
    },
    auth: value.auth,
    catalog: value.catalog,
    authorize: value.authorize,
  };
}

/** The stored connection of a resting machine; `null` for `none`. */
export function valueOf(
  name: string,
  state: RestingState,
  context: ConnectionContext,
): ConnectionValue | null {
  if (state === 'none') return null;
  const { config, auth } = context;
  if (config === null || auth === null) throw new Error(`a ${state} connection has a config`);
  return {
    name,
    endpoint: config.endpoint,
    auth,
    catalog: context.catalog,
    state,
    result_limit: config.result_limit,
    timeout: config.timeout,
    return_to: config.return_to,
    authorize: context.authorize,
  };
}

/** The indexes of a stored connection: the secret it sends (for `DELETE /secrets/{id}`). */
export function indexOf(tenant: string, value: ConnectionValue): IndexValues {
  const credential = value.auth.kind === 'bearer' ? value.auth.credential : undefined;
  return { [INDEX.secret]: credential === undefined ? [] : [scoped(tenant, credential)] };
}

/** 2.12: the connection as the wire shows it. */
export function wireOf(value: ConnectionValue): Connection {
  return {
    name: value.name,
    endpoint: value.endpoint,
    auth: value.auth,
    catalog: value.catalog,
    result_limit: value.result_limit,
    state: value.state,
    timeout: value.timeout,
  };
}
