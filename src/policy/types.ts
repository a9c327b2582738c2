/**
 * The shapes the policy compiler reads and writes (2.6, decisions rows 23 to 27).
 *
 * The inputs are structural so the zod output of `src/schemas/tenant.ts` (`Policy`)
 * fits them as it is, and so a caller that has not parsed defaults yet fits too: the
 * compiler applies the row 23 defaults itself. `operand.value` stays `unknown` because
 * its type by `op` (row 25) is the compiler's check as well as the schema's.
 */

/** 2.6 item ops. */
export type PolicyOp = 'is' | 'is_not' | 'in' | 'not_in' | 'lt' | 'gt';

/** 2.6 posture: under permissive only deny items bind; under restrictive allow items must be met. */
export type Posture = 'permissive' | 'restrictive';

/** A JSON scalar: the operand of `is`/`is_not` and an element of an `in`/`not_in` operand (row 25). */
export type Scalar = string | number | boolean | null;

/** 2.6 item as a tenant writes it: allow or deny if `arg op operand`. */
export interface PolicyItemInput {
  /** An input-schema property, dotted for nested object properties (row 26). */
  readonly arg: string;
  readonly effect: 'allow' | 'deny';
  readonly op: PolicyOp;
  readonly operand: { readonly value: unknown };
}

/** 2.6 policy as a tenant writes it; absent fields take the row 23 defaults. */
export interface PolicyInput {
  /** The name the model sees (row 27). */
  readonly tool: string;
  readonly allow?: boolean | undefined;
  readonly posture?: Posture | undefined;
  readonly items?: readonly PolicyItemInput[] | undefined;
  readonly project?: readonly string[] | undefined;
}

/** Where a tool on the surface comes from: the vendor document, or a connection's catalog. */
export type ToolSource = 'vendor' | { readonly connection: string; readonly tool: string };

/** One tool the model sees: what policies compile against (2.6 "the surface", row 93). */
export interface SurfaceTool {
  /** Model-visible: the vendor tool name, or `<connection>__<tool>` for an extra tool (row 27). */
  readonly name: string;
  /** The tool's JSON Schema 2020-12 input schema, an object with `type: "object"` (row 16). */
  readonly inputSchema: unknown;
  readonly source: ToolSource;
}

/** An item after compilation; `index` is its position in the tenant's `items`. */
export type CompiledItem =
  | {
      readonly index: number;
      readonly arg: string;
      readonly op: 'is' | 'is_not';
      readonly value: Scalar;
    }
  | {
      readonly index: number;
      readonly arg: string;
      readonly op: 'in' | 'not_in';
      readonly value: readonly Scalar[];
    }
  | {
      readonly index: number;
      readonly arg: string;
      readonly op: 'lt' | 'gt';
      readonly value: number;
    };

/** The compiled rules of one tool on the surface; a tool without a policy gets the row 23 defaults. */
export interface ToolPlan {
  readonly allow: boolean;
  readonly posture: Posture;
  /** Deny items in their written order: the first that matches names the denial. */
  readonly denyItems: readonly CompiledItem[];
  readonly allowItems: readonly CompiledItem[];
  /** Args named by any allow item, in first-written order: what restrictive posture binds. */
  readonly conditionedArgs: readonly string[];
  /** Args projected as evidence, duplicates dropped. */
  readonly project: readonly string[];
}

/** A compiled, frozen set of policies over one surface. */
export interface PolicyPlan {
  /** Every tool on the surface by its model-visible name, policy or not (row 24). */
  readonly tools: Readonly<Record<string, ToolPlan>>;
  /** SHA-256 (64 lowercase hex) of the RFC 8785 form of `tools`: what a gate pins (part B). */
  readonly digest: string;
}

/**
 * Values of the policy's `project` args keyed by the dotted arg (part B `evidence`).
 * An arg absent from the call is left out, so a `null` here is a `null` the model sent.
 */
export type Evidence = Readonly<Record<string, unknown>>;

/** Part B `invoke.denied` reasons the policy decides; `no_executor`, `invalid_args` are the caller's. */
export type DenialReason = 'disabled' | 'deny' | 'unsatisfied' | 'unknown_tool';

/** The call may run; `matched` lists the allow items (tenant indexes) that hold, for the gate. */
export interface Allowed {
  readonly allowed: true;
  readonly matched: readonly number[];
  readonly evidence: Evidence;
}

/** The call may not run, and why. */
export interface Denied {
  readonly allowed: false;
  readonly reason: DenialReason;
  /** The deny item that matched (`deny`); null for every other reason. */
  readonly item: number | null;
  /** The arg at fault (`deny`, `unsatisfied`), so the model can be told what to change. */
  readonly arg: string | null;
  readonly evidence: Evidence;
}

/** What the policy says about one call. */
export type Decision = Allowed | Denied;
