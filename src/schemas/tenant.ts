/**
 * The tenant config a tenant owner lands at consent (2.6): the inference option, extra
 * tools and per-tool policies, with the defaults of decisions row 23 and the operand
 * typing of row 25. Whether the policies fit the tools is the policy compiler's check
 * (rows 23, 26, 93); the schema refuses what is wrong on its face.
 */
import { z } from 'zod';
import { ConnectionName, OpaqueId, ResourceName, orMissing } from './common.ts';

/** Bounds the interface leaves open, kept generous so only abuse meets them. */
export const TENANT_BOUNDS = {
  policies: 256,
  items: 256,
  project: 64,
  operandValues: 256,
  extraTools: 256,
} as const;

/** 2.6: an MCP tool of a connection the tenant already links (model-visible `<connection>__<tool>`, row 27). */
export const ExtraTool = z
  .object({
    connection: ConnectionName,
    tool: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(128, { error: 'must be at most 128 characters' })
      .describe('The name by which the MCP server identifies the tool.'),
  })
  .meta({
    id: 'ExtraTool',
    description: 'A tool the tenant brings from a linked connection.',
  });
export type ExtraTool = z.infer<typeof ExtraTool>;

const Arg = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(256, { error: 'must be at most 256 characters' })
  .describe('An input-schema property, dotted for nested ones (`address.city`).');

const Effect = z.enum(['allow', 'deny'], { error: orMissing('must be allow or deny') });

/** A JSON scalar: the operand of `is` and `is_not`, and each value of an `in` list. */
const scalar = (reason: string) =>
  z.union([z.string(), z.number(), z.boolean(), z.null()], { error: orMissing(reason) });

const OPS = ['is', 'is_not', 'in', 'not_in', 'lt', 'gt'] as const;

/** Row 25: the operand of `is`/`is_not` is a scalar. */
const ScalarItem = z.object({
  arg: Arg,
  effect: Effect,
  op: z.enum(['is', 'is_not']),
  operand: z.object({
    value: scalar('must be a string, number, boolean or null when op is is or is_not'),
  }),
});

/** Row 25: the operand of `in`/`not_in` is an array of scalars. */
const ListItem = z.object({
  arg: Arg,
  effect: Effect,
  op: z.enum(['in', 'not_in']),
  operand: z.object({
    value: z
      .array(scalar('must be a string, number, boolean or null'), {
        error: orMissing('must be an array when op is in or not_in'),
      })
      .min(1, { error: 'must hold at least one value' })
      .max(TENANT_BOUNDS.operandValues, {
        error: `must hold at most ${TENANT_BOUNDS.operandValues} values`,
      }),
  }),
});

/** Row 25: the operand of `lt`/`gt` is a number. */
const NumberItem = z.object({
  arg: Arg,
  effect: Effect,
  op: z.enum(['lt', 'gt']),
  operand: z.object({
    value: z.number({ error: orMissing('must be a number when op is lt or gt') }),
  }),
});

/** 2.6 item: allow or deny if `arg op operand`; the operand's type follows `op` (row 25). */
export const PolicyItem = z
  .discriminatedUnion('op', [ScalarItem, ListItem, NumberItem], {
    // An unknown `op` fails the union itself (a wrong operand fails inside its branch); a
    // non-object fails it too, with invalid_type, though the issue's type does not say so.
    error: (issue) =>
      (issue.code as string) === 'invalid_union' ? `must be one of ${OPS.join(', ')}` : undefined,
  })
  .meta({
    id: 'PolicyItem',
    description: 'One rule of a policy: allow or deny if `arg op operand`.',
  });
export type PolicyItem = z.infer<typeof PolicyItem>;

/** 2.6 policy with the defaults of decisions row 23. */
export const Policy = z
  .object({
    tool: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(256, { error: 'must be at most 256 characters' })
      .describe('The name the model sees.'),
    allow: z.boolean().default(true).describe('The tool enable; when false nothing else matters.'),
    posture: z
      .enum(['permissive', 'restrictive'], {
        error: orMissing('must be permissive or restrictive'),
      })
      .default('permissive'),
    items: z
      .array(PolicyItem)
      .max(TENANT_BOUNDS.items, { error: `must hold at most ${TENANT_BOUNDS.items} items` })
      .default([]),
    project: z
      .array(Arg)
      .max(TENANT_BOUNDS.project, { error: `must hold at most ${TENANT_BOUNDS.project} args` })
      .default([])
      .describe('Args projected as evidence.'),
  })
  .meta({ id: 'Policy', description: "The tenant's rules for one tool." });
export type Policy = z.infer<typeof Policy>;

/** 2.6: the tenant config; absent lists add nothing and allow every tool. */
export const TenantConfig = z
  .object({
    inference: ResourceName.describe('The inference option the installs run under.'),
    extra_tools: z
      .array(ExtraTool)
      .max(TENANT_BOUNDS.extraTools, {
        error: `must hold at most ${TENANT_BOUNDS.extraTools} tools`,
      })
      .superRefine((tools, ctx) => {
        const seen = new Set<string>();
        tools.forEach((tool, index) => {
          const key = `${tool.connection}__${tool.tool}`;
          if (seen.has(key)) {
            ctx.addIssue({
              code: 'custom',
              path: [index],
              message: `names ${key} twice`,
              input: tool,
            });
          }
          seen.add(key);
        });
      })
      .default([]),
    policies: z
      .array(Policy)
      .max(TENANT_BOUNDS.policies, {
        error: `must hold at most ${TENANT_BOUNDS.policies} policies`,
      })
      .superRefine((policies, ctx) => {
        // Row 23: one policy per tool.
        const seen = new Set<string>();
        policies.forEach((policy, index) => {
          if (seen.has(policy.tool)) {
            const message = `duplicates the policy for ${policy.tool}`;
            ctx.addIssue({ code: 'custom', path: [index, 'tool'], message, input: policy.tool });
          }
          seen.add(policy.tool);
        });
      })
      .default([]),
  })
  .meta({ id: 'TenantConfig', description: 'What a tenant owner lands at consent.' });
export type TenantConfig = z.infer<typeof TenantConfig>;

/** 4.3 `POST /consent/{request}` answer: the install the consent created or kept. */
export const ConsentAnswer = z
  .object({ install: OpaqueId })
  .meta({ id: 'ConsentAnswer', description: 'The install a consent created or kept.' });
export type ConsentAnswer = z.infer<typeof ConsentAnswer>;
