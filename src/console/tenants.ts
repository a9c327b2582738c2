/**
 * Tenants and their members (decisions rows 73 and 74). `PUT /console/tenant` creates
 * the caller's tenant with the caller as owner, or lets an owner rename it and replace its
 * member list, the caller staying owner. Every change is one control-store batch whose
 * writes each name the version they read, so two racing owners never both commit.
 */
import { InvalidRequest } from '../errors.ts';
import { requireOwner, type ConsoleCaller } from './caller.ts';
import { INDEX, type MembershipValue, type Role, type TenantValue } from '../resources/types.ts';
import type { Memberships, PutTenantBody, TenantRead } from '../schemas/console.ts';
import type { WriteOutcome } from '../schemas/common.ts';
import type { ControlStore, ControlWrite, Versioned } from '../storage/control-store.ts';

/** The member list a put asks for: the body's, with the caller forced to owner. */
function wantedMembers(
  caller: ConsoleCaller,
  members: PutTenantBody['members'],
  held: readonly Versioned<MembershipValue>[],
): Map<string, Role> {
  const wanted = new Map<string, Role>();
  if (members === undefined) {
    // Absent keeps the list as it is (a rename alone).
    for (const member of held) wanted.set(member.id, member.value.role);
  } else {
    members.forEach((member, index) => {
      if (wanted.has(member.user)) {
        throw new InvalidRequest('duplicate_member', `${member.user} is listed twice`, {
          field: `body.members.${index}.user`,
          reason: 'is listed twice',
        });
      }
      wanted.set(member.user, member.role);
    });
  }
  // Row 74: the caller stays owner whatever the list says.
  wanted.set(caller.user, 'owner');
  return wanted;
}

function membershipPut(tenant: string, user: string, role: Role, expect: number): ControlWrite {
  const value: MembershipValue = { user, role };
  return {
    op: 'put',
    kind: 'membership',
    scope: tenant,
    id: user,
    value,
    expect,
    index: { [INDEX.user]: [user] },
  };
}

/**
 * Creates or updates the caller's tenant. Creating needs no role (the tenant does not
 * exist yet); changing an existing one needs an owner (403 otherwise).
 */
export async function putTenant(
  store: ControlStore,
  caller: ConsoleCaller,
  body: PutTenantBody,
): Promise<WriteOutcome> {
  const tenant = caller.tenant;
  const current = await store.get('tenant', '', tenant);
  if (current === null) {
    const wanted = wantedMembers(caller, body.members, []);
    const value: TenantValue = { name: body.name };
    await store.write([
      { op: 'put', kind: 'tenant', scope: '', id: tenant, value, expect: 0 },
      ...[...wanted].map(([user, role]) => membershipPut(tenant, user, role, 0)),
    ]);
    return 'created';
  }
  requireOwner(caller);
  const held = await store.list('membership', tenant);
  const wanted = wantedMembers(caller, body.members, held);
  const writes: ControlWrite[] = [];
  for (const member of held) {
    const role = wanted.get(member.id);
    if (role === undefined) {
      writes.push({
        op: 'delete',
        kind: 'membership',
        scope: tenant,
        id: member.id,
        expect: member.version,
      });
    } else if (role !== member.value.role) {
      writes.push(membershipPut(tenant, member.id, role, member.version));
    }
    wanted.delete(member.id);
  }
  for (const [user, role] of wanted) writes.push(membershipPut(tenant, user, role, 0));
  const renamed = current.value.name !== body.name;
  if (writes.length === 0 && !renamed) return 'unchanged';
  // The tenant is written with its version even when only members change: the batch then
  // fails whole if another owner changed the tenant meanwhile.
  const value: TenantValue = { name: body.name };
  writes.unshift({
    op: 'put',
    kind: 'tenant',
    scope: '',
    id: tenant,
    value,
    expect: current.version,
  });
  await store.write(writes);
  return 'replaced';
}

/** Row 74: every tenant the user belongs to, with the role there. */
export async function membershipsOf(store: ControlStore, user: string): Promise<Memberships> {
  const found = await store.findByIndex('membership', INDEX.user, user);
  return found
    .filter((membership) => membership.id === user)
    .map((membership) => ({ tenant: membership.scope, role: membership.value.role }));
}

/** Row 74: the caller's tenant, its name and every member with their role, by user. */
export async function readTenant(store: ControlStore, tenant: string): Promise<TenantRead> {
  const [current, members] = await Promise.all([
    store.get('tenant', '', tenant),
    store.list('membership', tenant),
  ]);
  return {
    tenant,
    name: current?.value.name ?? '',
    members: members
      .map((member) => ({ user: member.id, role: member.value.role }))
      .sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0)),
  };
}
