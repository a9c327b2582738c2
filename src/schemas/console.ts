/**
 * The console's remaining shapes: secrets (2.14, row 55), usage (2.15, rows 52 to 54),
 * memberships and the tenant (row 74), console tokens (row 73), installs and their
 * keys (rows 76 and 77).
 */
import { z } from 'zod';
import { Count, Day, Millis, Next, ResourceName, orMissing } from './common.ts';
import { ComposedDocument } from './vendor.ts';

/** Decisions row 54: the longest usage range, in days counted inclusively. */
export const MAX_USAGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** Decisions row 55: `PUT /secrets/{id}` body; the value is never served back. */
export const PutSecretBody = z
  .object({
    value: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(64 * 1024, { error: 'must be at most 65536 characters' }),
  })
  .meta({ id: 'PutSecretBody', description: 'A secret value to hold; it is never served back.' });
export type PutSecretBody = z.infer<typeof PutSecretBody>;

/** Decisions row 55: a secret as listed; never its value. */
export const SecretRow = z
  .object({ name: ResourceName, created: Millis, updated: Millis })
  .meta({ id: 'SecretRow', description: 'A secret the tenant holds, without its value.' });
export type SecretRow = z.infer<typeof SecretRow>;

/** Decisions row 55: `GET /secrets`. */
export const SecretList = z
  .array(SecretRow)
  .meta({ id: 'SecretList', description: "The tenant's secrets, without values." });
export type SecretList = z.infer<typeof SecretList>;

/** Whole days from `from` to `to`, counted inclusively. */
function daysBetween(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
}

/** 4.3 `GET /usage` query, decisions row 54: inclusive UTC days, from ≤ to, ≤366 days. */
export const UsageQuery = z
  .object({
    from: Day.describe('First UTC checkpoint day, inclusive.'),
    to: Day.describe('Last UTC checkpoint day, inclusive.'),
  })
  .superRefine((range, ctx) => {
    const days = daysBetween(range.from, range.to);
    // Malformed days were refused above; only judge a range of real days.
    if (Number.isNaN(days)) return;
    if (days < 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['from'],
        message: 'must not be after to',
        input: range.from,
      });
    } else if (days > MAX_USAGE_DAYS) {
      const message = `must be at most ${MAX_USAGE_DAYS} days from from, counted inclusively`;
      ctx.addIssue({ code: 'custom', path: ['to'], message, input: range.to });
    }
  });
export type UsageQuery = z.infer<typeof UsageQuery>;

/** 2.15, decisions row 52: one tenant's usage on one UTC checkpoint day. */
export const UsageRow = z
  .object({
    day: Day,
    bytes_archived: Count,
    events: Count,
    sessions_checkpointed: Count,
    tokens: z
      .record(z.string(), z.object({ input: Count, output: Count }))
      .describe('Model key (`<provider>[/<model>]`) to tokens.'),
    tool_calls: z.record(z.string(), Count).describe('Model-visible tool name to calls.'),
  })
  .meta({ id: 'UsageRow', description: 'One tenant, one UTC checkpoint day.' });
export type UsageRow = z.infer<typeof UsageRow>;

/** 4.3 `GET /usage` answer: days with no usage have no row. */
export const UsageAnswer = z.array(UsageRow).meta({
  id: 'UsageAnswer',
  description: 'Usage rows of the range, days without usage left out.',
});
export type UsageAnswer = z.infer<typeof UsageAnswer>;

/** Decisions row 74: what a member may do. */
export const Role = z.enum(['owner', 'member'], { error: orMissing('must be owner or member') });
export type Role = z.infer<typeof Role>;

/** A console user, as the IdP or the operator names them. */
export const User = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(256, { error: 'must be at most 256 characters' });

/**
 * A tenant id, chosen by whoever first asks a console token for it (decisions row 73).
 * Lowercase letters, digits and `-`: it is a token claim, a store scope and the first
 * part of `<tenant>/<name>` index values, so it never holds a `/`.
 */
export const TenantId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, {
    error: 'must be 1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit',
  })
  .meta({ id: 'TenantId', description: 'A tenant id: `^[a-z0-9][a-z0-9-]{0,62}$`.' });
export type TenantId = z.infer<typeof TenantId>;

/** Decisions row 74: `GET /console/memberships`. */
export const Memberships = z
  .array(z.object({ tenant: TenantId, role: Role }))
  .meta({ id: 'Memberships', description: "The caller's tenants and its role in each." });
export type Memberships = z.infer<typeof Memberships>;

/** Decisions row 74: `PUT /console/tenant` body; the caller stays owner. */
export const PutTenantBody = z
  .object({
    name: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(128, { error: 'must be at most 128 characters' }),
    members: z
      .array(z.object({ user: User, role: Role }))
      .max(1000)
      .optional(),
  })
  .meta({
    id: 'PutTenantBody',
    description: 'Creates the tenant, or renames it; the caller is and stays its owner.',
  });
export type PutTenantBody = z.infer<typeof PutTenantBody>;

/** Decisions row 74: `GET /console/tenant`, the tenant's name and members, for any member. */
export const TenantRead = z
  .object({
    tenant: TenantId,
    name: z.string(),
    members: z.array(z.object({ user: User, role: Role })),
  })
  .meta({ id: 'TenantRead', description: "The console token's tenant: its name and members." });
export type TenantRead = z.infer<typeof TenantRead>;

/**
 * Decisions row 73: `POST /console/token` body, an OIDC id_token exchange (RFC 8693) or,
 * with `Authorization: Bearer <operator token>`, the operator grant naming the user.
 */
export const ConsoleTokenBody = z
  .union(
    [
      z.object({
        subject_token: z
          .string()
          .min(1, { error: 'must not be empty' })
          .max(16 * 1024, { error: 'must be at most 16384 characters' }),
        tenant: TenantId,
      }),
      z.object({ user: User, tenant: TenantId }),
    ],
    { error: 'must be {subject_token, tenant} or, with the operator token, {user, tenant}' },
  )
  .meta({
    id: 'ConsoleTokenBody',
    description:
      'How a console token is asked for: an OpenID Connect ID token (`subject_token`) for a tenant or, with the operator token as bearer, a user for a tenant.',
  });
export type ConsoleTokenBody = z.infer<typeof ConsoleTokenBody>;

/** Decisions row 73: a console token for one (user, tenant). */
export const ConsoleTokenAnswer = z
  .object({ token: z.string(), expires: Millis, user: User })
  .meta({ id: 'ConsoleTokenAnswer', description: 'A console token for one user on one tenant.' });
export type ConsoleTokenAnswer = z.infer<typeof ConsoleTokenAnswer>;

/** Decisions row 76: `GET /installs`, composed documents by page. */
export const InstallList = z.object({ items: z.array(ComposedDocument), next: Next }).meta({
  id: 'InstallList',
  description: "The tenant's installs as composed documents, by page.",
});
export type InstallList = z.infer<typeof InstallList>;

/** Decisions row 77: a rotated install key, shown once. */
export const InstallKeyAnswer = z.object({ key: z.string() }).meta({
  id: 'InstallKeyAnswer',
  description: 'A new install key, shown once; the previous key stops working.',
});
export type InstallKeyAnswer = z.infer<typeof InstallKeyAnswer>;
