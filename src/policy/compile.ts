/**
 * The policy compiler: a tenant's policies (2.6) checked against the surface of tools
 * the model sees and turned into a frozen plan that `evaluateCall` reads.
 *
 * "Policies compile against the surface of the resolved connections; an invalid policy
 * is rejected with its reason" (2.6). The checks are decisions rows 23 (defaults, one
 * policy per tool, only tools on the surface), 25 (operand type by op) and 26 (args
 * exist in the input schema, dotted), each a 400 naming the field. Every fault is
 * collected, so one answer lists them all in `errors`; `field`/`reason` name the first.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { InvalidRequest } from '../errors.ts';
import type { FieldError } from '../schemas/problem.ts';
import { fitOperand } from './operand.ts';
import { resolveArg } from './schema-path.ts';
import type { CompiledItem, PolicyInput, PolicyPlan, SurfaceTool, ToolPlan } from './types.ts';

export interface CompileOptions {
  /** The path of the policies in the request, prefixed to every field; default `policies`. */
  readonly field?: string;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) {
      deepFreeze(member);
    }
    Object.freeze(value);
  }
  return value;
}

/** Row 23 (and row 24 for a tool nobody wrote a policy for): allow, permissive, nothing bound. */
const DEFAULT_PLAN: ToolPlan = deepFreeze({
  allow: true,
  posture: 'permissive',
  denyItems: [],
  allowItems: [],
  conditionedArgs: [],
  project: [],
});

/** The surface by name; two tools under one model-visible name is the row 27 clash. */
function indexSurface(surface: readonly SurfaceTool[]): ReadonlyMap<string, SurfaceTool> {
  const byName = new Map<string, SurfaceTool>();
  for (const tool of surface) {
    if (byName.has(tool.name)) {
      const reason = `is the model-visible name of two tools`;
      throw new InvalidRequest('tool_name_clash', `${tool.name} ${reason}`, { reason });
    }
    byName.set(tool.name, tool);
  }
  return byName;
}

/** One policy compiled against its tool; faults are pushed to `faults` with full field paths. */
function compileOne(
  policy: PolicyInput,
  tool: SurfaceTool,
  at: string,
  faults: FieldError[],
): ToolPlan {
  const denyItems: CompiledItem[] = [];
  const allowItems: CompiledItem[] = [];
  for (const [index, item] of (policy.items ?? []).entries()) {
    const field = `${at}.items.${index}`;
    const resolved = resolveArg(tool.inputSchema, item.arg);
    if (!resolved.ok) {
      faults.push({ field: `${field}.arg`, reason: resolved.reason });
      continue;
    }
    const fit = fitOperand(item, index, resolved.shape);
    if (!fit.ok) {
      faults.push({ field: `${field}.${fit.fault.suffix}`, reason: fit.fault.reason });
      continue;
    }
    (item.effect === 'deny' ? denyItems : allowItems).push(fit.item);
  }
  const project = policy.project ?? [];
  for (const [index, arg] of project.entries()) {
    const resolved = resolveArg(tool.inputSchema, arg);
    if (!resolved.ok) {
      faults.push({ field: `${at}.project.${index}`, reason: resolved.reason });
    }
  }
  return {
    allow: policy.allow ?? DEFAULT_PLAN.allow,
    posture: policy.posture ?? DEFAULT_PLAN.posture,
    denyItems,
    allowItems,
    conditionedArgs: [...new Set(allowItems.map((item) => item.arg))],
    project: [...new Set(project)],
  };
}

/** SHA-256 in lowercase hex of the RFC 8785 form of `value` (as the vendor hash, row 21). */
function jcsDigest(value: unknown): string {
  return createHash('sha256')
    .update(canonicalize(value) ?? '')
    .digest('hex');
}

/**
 * Compiles `policies` against the tools the model sees.
 *
 * @param policies the tenant's policies, parsed (defaults may be applied or absent).
 * @param surface every tool the model sees: vendor tools and extra tools as
 *   `<connection>__<tool>` (row 27); every one gets a plan, with a policy or without.
 * @returns a deeply frozen plan with its digest.
 * @throws InvalidRequest `invalid_policy` with `field` (e.g.
 *   `policies.2.items.0.operand.value`), `reason`, and every fault in `errors`;
 *   `tool_name_clash` when two surface tools share a name.
 */
export function compilePolicies(
  policies: readonly PolicyInput[],
  surface: readonly SurfaceTool[],
  options: CompileOptions = {},
): PolicyPlan {
  const prefix = options.field ?? 'policies';
  const byName = indexSurface(surface);
  const compiled = new Map<string, ToolPlan>();
  const firstAt = new Map<string, string>();
  const faults: FieldError[] = [];
  for (const [index, policy] of policies.entries()) {
    const at = `${prefix}.${index}`;
    const tool = byName.get(policy.tool);
    const earlier = firstAt.get(policy.tool);
    if (tool === undefined) {
      faults.push({
        field: `${at}.tool`,
        reason: `names no tool the model sees: ${JSON.stringify(policy.tool)}`,
      });
    } else if (earlier !== undefined) {
      faults.push({
        field: `${at}.tool`,
        reason: `duplicates the policy for ${policy.tool} at ${earlier}`,
      });
    } else {
      firstAt.set(policy.tool, at);
      compiled.set(policy.tool, compileOne(policy, tool, at, faults));
    }
  }
  const first = faults[0];
  if (first !== undefined) {
    throw new InvalidRequest('invalid_policy', `${first.field} ${first.reason}`, {
      field: first.field,
      reason: first.reason,
      errors: faults,
    });
  }
  // Sorted so the digest does not depend on the surface's order; `fromEntries` keeps a
  // tool named `__proto__` an own key.
  const names = [...byName.keys()].sort();
  const tools = Object.fromEntries(names.map((name) => [name, compiled.get(name) ?? DEFAULT_PLAN]));
  return deepFreeze({ tools, digest: jcsDigest(tools) });
}
