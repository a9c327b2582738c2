/**
 * The console audience (interface 5 rules 4 and 5, decisions rows 73 to 75): a console
 * token names one (user, tenant); the role is read from the tenant's membership on every
 * request, so a demoted member loses rights at once, not when the token ends.
 *
 * A token stands on the membership it was minted for. A token minted
 * for a member carries when that membership began (`mc`); once the user is removed the
 * token is refused with 401 at once, and it stays refused if the user is added again
 * later (a new membership, a new sign-in). A token minted while the tenant did not exist
 * yet (so that `PUT /console/tenant` can create it) carries none: it stands on a
 * membership that began after it was minted, its creator's, and has no role before.
 */
import { requireBearer } from '../auth/bearer.ts';
import type { TokenService, VerifiedToken } from '../auth/tokens.ts';
import { Forbidden, Unauthenticated } from '../errors.ts';
import type { ControlStore, Versioned } from '../storage/control-store.ts';
import type { MembershipValue, Role } from '../resources/types.ts';

/** Console token lifetime (decisions row 33). */
export const CONSOLE_TOKEN_TTL_MS = 60 * 60 * 1000;

/** The verified caller of a console route. */
export interface ConsoleCaller {
  readonly user: string;
  readonly tenant: string;
  /** Null while the tenant does not exist yet. */
  readonly role: Role | null;
  /** The producer a console session token writes as (decisions part D). */
  readonly producer: string;
}

export interface ConsoleAuthDeps {
  readonly tokens: TokenService;
  readonly controlStore: ControlStore;
}

/** The claims a console token carries of the membership it was minted for, if any. */
export function membershipClaim(membership: Versioned<MembershipValue> | null): {
  readonly ext?: { readonly mc: number };
} {
  return membership === null ? {} : { ext: { mc: membership.created } };
}

/** True when `membership` is the one `token` was minted under (see the module comment). */
function standsOn(token: VerifiedToken, membership: Versioned<MembershipValue>): boolean {
  const bound = token.ext?.mc;
  if (typeof bound === 'number') return bound === membership.created;
  // iat has whole seconds: a membership created in the second of minting counts as after.
  return membership.created >= token.issuedAt;
}

/** Verifies the console token of a request and reads the caller's current role. */
export async function consoleCaller(
  request: { readonly headers: { readonly authorization?: string | undefined } },
  deps: ConsoleAuthDeps,
): Promise<ConsoleCaller> {
  const token = await deps.tokens.verify(requireBearer(request.headers.authorization), 'console');
  const user = token.sub.startsWith('console:') ? token.sub.slice('console:'.length) : token.sub;
  const tenant = token.tid ?? '';
  const membership = await deps.controlStore.get('membership', tenant, user);
  if (membership === null ? await tenantExists(deps, tenant) : !standsOn(token, membership)) {
    throw new Unauthenticated(
      `the token's membership of tenant ${tenant} has ended; sign in again`,
      true,
    );
  }
  return { user, tenant, role: membership?.value.role ?? null, producer: `console:${user}` };
}

async function tenantExists(deps: ConsoleAuthDeps, tenant: string): Promise<boolean> {
  return (await deps.controlStore.get('tenant', '', tenant)) !== null;
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
