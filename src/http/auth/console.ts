/**
 * The console audience (interface 5 rules 4 and 5, decisions rows 73 to 75): a console
 * token names one (user, tenant); the role is read from the tenant's membership on every
 * request, so a demoted or removed member loses rights at once, not when the token ends.
 */
import type { FastifyRequest } from 'fastify';
import { requireBearer } from '../../auth/bearer.ts';
import type { TokenService } from '../../auth/tokens.ts';
import { Forbidden } from '../../errors.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import type { MembershipValue, Role } from '../../resources/types.ts';

/** Console token lifetime (decisions row 33). */
export const CONSOLE_TOKEN_TTL_MS = 60 * 60 * 1000;

/** The verified caller of a console route. */
export interface ConsoleCaller {
  readonly user: string;
  readonly tenant: string;
  /** Null while the tenant does not exist or the user is not (or no longer) a member. */
  readonly role: Role | null;
  /** The producer a console session token writes as (decisions part D). */
  readonly producer: string;
}

export interface ConsoleAuthDeps {
  readonly tokens: TokenService;
  readonly controlStore: ControlStore;
}

/** Verifies the console token of a request and reads the caller's current role. */
export async function consoleCaller(
  request: FastifyRequest,
  deps: ConsoleAuthDeps,
): Promise<ConsoleCaller> {
  const token = await deps.tokens.verify(requireBearer(request.headers.authorization), 'console');
  const user = token.sub.startsWith('console:') ? token.sub.slice('console:'.length) : token.sub;
  const tenant = token.tid ?? '';
  const membership = await deps.controlStore.get<MembershipValue>('membership', tenant, user);
  return { user, tenant, role: membership?.value.role ?? null, producer: `console:${user}` };
}

/** Any member of the tenant (plain reads, rule 4). */
export function requireMember(caller: ConsoleCaller): ConsoleCaller & { role: Role } {
  if (caller.role === null) {
    throw new Forbidden('not_member', `${caller.user} is not a member of tenant ${caller.tenant}`);
  }
  return caller as ConsoleCaller & { role: Role };
}

/** An owner of the tenant (writes, usage and the opened audit, rules 4 and 5). */
export function requireOwner(caller: ConsoleCaller): ConsoleCaller & { role: 'owner' } {
  if (requireMember(caller).role !== 'owner') {
    throw new Forbidden('not_owner', `only an owner of tenant ${caller.tenant} may do this`);
  }
  return caller as ConsoleCaller & { role: 'owner' };
}
