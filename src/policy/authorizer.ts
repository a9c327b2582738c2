/**
 * The authorizer at run time (decisions part B `invoke.allowed`
 * and `invoke.denied`, rows 17, 18, 24, 90): decides each call of a `model.output`
 * against the session's surface, in this order:
 *
 * 1. a name the surface lacks is `unknown_tool`;
 * 2. arguments that fail the tool's `input_schema` (JSON Schema 2020-12, or draft-07 when
 *    the schema says so, as many MCP servers' do) are
 *    `invalid_args`, before any policy looks at them;
 * 3. the compiled policy plan decides (`disabled`, `deny`, `unsatisfied`, or allowed with
 *    the allow items that held);
 * 4. an allowed vendor tool needs the session's executor (`no_executor`, row 90); an
 *    extra tool goes to its connection, which the service calls itself (row 89).
 *
 * Every decision carries the evidence of the policy's `project` args. One authorizer is
 * built per session configuration and reused: schemas compile once.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import { evaluateCall } from './evaluate.ts';
import { projectArgs } from './json-path.ts';
import type { Evidence, PolicyPlan, ToolSource } from './types.ts';

/** One tool of the session's surface with what a call of it is allowed with. */
export interface AuthorizedTool {
  /** The model-visible name (row 27). */
  readonly name: string;
  readonly inputSchema: unknown;
  readonly source: ToolSource;
  /** Row 18: the call's deadline span, ms. */
  readonly timeoutMs: number;
  /** Row 17: bytes of the result the model sees. */
  readonly resultLimit: number;
}

/** Part B `invoke.denied` reasons. */
export type RefusalReason =
  'disabled' | 'deny' | 'unsatisfied' | 'unknown_tool' | 'no_executor' | 'invalid_args';

export type Authorization =
  | {
      readonly allowed: true;
      /** `executor:<n>` or `connection:<c>` (row 10). */
      readonly target: string;
      readonly tool: AuthorizedTool;
      /** Indexes of the allow items that held (what the gate pins). */
      readonly matched: readonly number[];
      readonly evidence: Evidence;
    }
  | {
      readonly allowed: false;
      readonly reason: RefusalReason;
      /** The deciding policy item's index, if one decided. */
      readonly item: number | null;
      readonly evidence: Evidence;
      /** Why, for the model (the schema's first error, the arg at fault). */
      readonly detail: string | null;
    };

/** Decides the calls of one session. */
export class Authorizer {
  readonly plan: PolicyPlan;
  readonly #tools: ReadonlyMap<string, AuthorizedTool>;
  readonly #executor: string | null;
  readonly #validators = new Map<string, ValidateFunction | Error>();
  /** Made on the first call that needs a schema checked: building one costs milliseconds. */
  #ajv: Ajv2020 | null = null;

  constructor(plan: PolicyPlan, tools: readonly AuthorizedTool[], executor: string | null) {
    this.plan = plan;
    this.#tools = new Map(tools.map((tool) => [tool.name, tool]));
    this.#executor = executor;
  }

  /** The tool the model calls `name`, if it is on the surface. */
  tool(name: string): AuthorizedTool | undefined {
    return this.#tools.get(name);
  }

  /** The decision on one call of tool `name` with `args`. */
  decide(name: string, args: unknown): Authorization {
    const tool = this.#tools.get(name);
    const toolPlan = this.plan.tools[name];
    if (tool === undefined || toolPlan === undefined) {
      return { allowed: false, reason: 'unknown_tool', item: null, evidence: {}, detail: null };
    }
    const evidence = projectArgs(args, toolPlan.project);
    const invalid = this.#check(tool, args);
    if (invalid !== null) {
      return { allowed: false, reason: 'invalid_args', item: null, evidence, detail: invalid };
    }
    const decision = evaluateCall(this.plan, name, args);
    if (!decision.allowed) {
      const detail = decision.arg === null ? null : `arg ${decision.arg}`;
      return { ...decision, detail };
    }
    if (tool.source === 'vendor') {
      if (this.#executor === null) {
        return { allowed: false, reason: 'no_executor', item: null, evidence, detail: null };
      }
      const target = `executor:${this.#executor}`;
      return { allowed: true, target, tool, matched: decision.matched, evidence };
    }
    const target = `connection:${tool.source.connection}`;
    return { allowed: true, target, tool, matched: decision.matched, evidence };
  }

  #validator(): Ajv2020 {
    if (this.#ajv === null) {
      this.#ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
      // MCP servers often declare draft-07 input schemas (server-everything does).
      this.#ajv.addMetaSchema(draft07);
    }
    return this.#ajv;
  }

  /** The first schema error of `args`, or null when they fit. */
  #check(tool: AuthorizedTool, args: unknown): string | null {
    let validate = this.#validators.get(tool.name);
    if (validate === undefined) {
      try {
        validate = this.#validator().compile(tool.inputSchema as object);
      } catch (error) {
        validate = error instanceof Error ? error : new Error(String(error));
      }
      this.#validators.set(tool.name, validate);
    }
    if (validate instanceof Error)
      return `the tool's input_schema does not compile: ${validate.message}`;
    if (validate(args)) return null;
    const [first] = validate.errors ?? [];
    if (first === undefined) return 'the arguments do not fit the input_schema';
    return `${first.instancePath === '' ? 'args' : `args${first.instancePath}`} ${first.message ?? 'is invalid'}`;
  }
}
