/**
 * The policy evaluator: what a compiled plan says about one tool call, as a pure
 * function of the plan, the tool's model-visible name and the model's arguments.
 *
 * Order (2.6, decisions rows 24 and 26, part B `invoke.denied`):
 * 1. a name not on the surface → `unknown_tool`;
 * 2. `allow: false` → `disabled` ("when off, nothing else in the policy matters");
 * 3. any deny item that matches → `deny`, naming the first in written order (deny
 *    overrides allow, under either posture);
 * 4. restrictive: every conditioned arg (one named by an allow item) must satisfy at
 *    least one allow item on that arg, else `unsatisfied`; a restrictive policy with no
 *    allow items conditions nothing;
 * 5. otherwise allowed, with the allow items that hold (for the gate).
 *
 * An arg the call does not carry matches nothing, `is_not`/`not_in` included (row 26:
 * fail closed), so it never trips a deny item and never satisfies an allow item.
 * Comparison is JSON deep equality with no coercion; `lt`/`gt` compare numbers only.
 * Never throws, whatever the arguments are.
 */
import { jsonEqual, lookupArg, projectArgs } from './json-path.ts';
import type {
  CompiledItem,
  Decision,
  DenialReason,
  Evidence,
  PolicyPlan,
  ToolPlan,
} from './types.ts';

/** Whether `item` holds for the call's `args`. */
export function itemMatches(item: CompiledItem, args: unknown): boolean {
  const actual = lookupArg(args, item.arg);
  if (actual === undefined) {
    return false;
  }
  switch (item.op) {
    case 'is':
      return jsonEqual(actual, item.value);
    case 'is_not':
      return !jsonEqual(actual, item.value);
    case 'in':
      return item.value.some((value) => jsonEqual(actual, value));
    case 'not_in':
      return !item.value.some((value) => jsonEqual(actual, value));
    case 'lt':
      return typeof actual === 'number' && actual < item.value;
    case 'gt':
      return typeof actual === 'number' && actual > item.value;
  }
}

/** The plan of a tool on the surface; own keys only, so `constructor` is not a tool. */
function toolPlan(plan: PolicyPlan, name: string): ToolPlan | undefined {
  return Object.hasOwn(plan.tools, name) ? plan.tools[name] : undefined;
}

function denied(
  reason: DenialReason,
  evidence: Evidence,
  item: CompiledItem | null = null,
  arg: string | null = item?.arg ?? null,
): Decision {
  return { allowed: false, reason, item: item?.index ?? null, arg, evidence };
}

/**
 * Decides one call.
 *
 * @param plan the compiled plan of the session's surface.
 * @param toolName the name the model called (model-visible, row 27).
 * @param args the model's arguments: any JSON, or anything at all.
 * @returns allowed with the matching allow items, or denied with its reason; both carry
 *   the evidence of the policy's `project` args (absent args left out).
 */
export function evaluateCall(plan: PolicyPlan, toolName: string, args: unknown): Decision {
  const tool = toolPlan(plan, toolName);
  if (tool === undefined) {
    return denied('unknown_tool', {});
  }
  const evidence = projectArgs(args, tool.project);
  if (!tool.allow) {
    return denied('disabled', evidence);
  }
  const deny = tool.denyItems.find((item) => itemMatches(item, args));
  if (deny !== undefined) {
    return denied('deny', evidence, deny);
  }
  const holding = tool.allowItems.filter((item) => itemMatches(item, args));
  if (tool.posture === 'restrictive') {
    const unmet = tool.conditionedArgs.find((arg) => !holding.some((item) => item.arg === arg));
    if (unmet !== undefined) {
      return denied('unsatisfied', evidence, null, unmet);
    }
  }
  return { allowed: true, matched: holding.map((item) => item.index), evidence };
}
