/**
 * Bounds on what a server may offer as its catalog. A catalog past a
 * bound is refused whole, at discovery, before anything is stored: a connection links
 * with every tool its server lists or not at all.
 *
 * - At most `MAX_CATALOG_TOOLS` tools, and `MAX_CATALOG_BYTES` of `tools/list` answers in
 *   all (the bytes the exchange receives are capped a little above that, so a server
 *   cannot make the service hold more while it reads).
 * - Every name follows decisions row 19, `^[a-zA-Z0-9_-]{1,64}$`.
 * - Every `inputSchema` and `outputSchema` is a valid JSON Schema (row 16): valid against
 *   the 2020-12 meta-schema, or against draft-07's when it says `$schema` draft-07, the
 *   dialect the MCP SDK's own servers declare. Another declared dialect is refused.
 *
 * Refusal reasons name the limit or rule and the tool's place in the list, never the
 * server's text: a name that breaks row 19 is not repeated, and a schema's errors are
 * reported by JSON pointer only.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import type { CatalogTool } from '../schemas/connections.ts';

/** The most tools a catalog may hold. */
export const MAX_CATALOG_TOOLS = 1_000;

/** The most bytes (UTF-8 JSON) the tools of a catalog may take, all pages together: 2 MiB. */
export const MAX_CATALOG_BYTES = 2 * 1024 * 1024;

/**
 * What a discovery exchange may receive in all: the catalog limit plus room for the
 * handshake, the JSON-RPC envelopes and SSE framing around the tools.
 */
export const MAX_DISCOVERY_BYTES = MAX_CATALOG_BYTES + 256 * 1024;

/** Decisions row 19. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

/** The meta-schema validator of each dialect the service reads, by `$schema` (no `#`). */
const META_SCHEMAS: ReadonlyMap<string, ValidateFunction> = (() => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addMetaSchema(draft07);
  const dialects = new Map<string, ValidateFunction>();
  for (const id of [DRAFT_2020_12, DRAFT_07]) {
    const validate = ajv.getSchema(id);
    if (validate === undefined) throw new Error(`ajv lacks the meta-schema ${id}`);
    dialects.set(id, validate);
  }
  return dialects;
})();

/** What breaks a bound: our words for the answer, and where exactly for the log. */
export interface CatalogProblem {
  readonly reason: string;
  /** The server's side of it (a JSON pointer into its schema): for the log only. */
  readonly detail?: string;
}

/** Why `schema` is not a JSON Schema the service reads, or undefined when it is one. */
export function schemaProblem(
  schema: Readonly<Record<string, unknown>>,
): CatalogProblem | undefined {
  const declared = schema.$schema;
  const dialect =
    declared === undefined
      ? DRAFT_2020_12
      : typeof declared === 'string'
        ? declared.replace(/#$/, '')
        : '';
  const validate = META_SCHEMAS.get(dialect);
  if (validate === undefined) {
    return { reason: 'declares a $schema other than JSON Schema 2020-12 or draft-07' };
  }
  if (validate(schema)) return undefined;
  const first = validate.errors?.[0];
  return {
    reason: `is not a valid JSON Schema (the meta-schema's ${first?.keyword ?? 'rules'} keyword fails)`,
    ...(first === undefined
      ? {}
      : { detail: `${first.instancePath || '/'}: ${first.message ?? ''}` }),
  };
}

/**
 * Why the tools of one discovery break a bound, or undefined. Tools are counted from 1
 * in the order the server listed them.
 */
export function catalogProblem(tools: readonly CatalogTool[]): CatalogProblem | undefined {
  if (tools.length > MAX_CATALOG_TOOLS) {
    return { reason: `it lists more than ${MAX_CATALOG_TOOLS} tools, the limit` };
  }
  for (const [index, tool] of tools.entries()) {
    if (!TOOL_NAME.test(tool.name)) {
      return {
        reason: `tool ${index + 1} has a name that breaks ${TOOL_NAME.source} (decisions row 19)`,
      };
    }
  }
  // Names are safe to repeat from here on: they passed row 19.
  for (const tool of tools) {
    for (const [field, schema] of [
      ['inputSchema', tool.inputSchema],
      ['outputSchema', tool.outputSchema],
    ] as const) {
      const problem = schema === undefined ? undefined : schemaProblem(schema);
      if (problem !== undefined) {
        return { ...problem, reason: `the ${field} of tool ${tool.name} ${problem.reason}` };
      }
    }
  }
  return undefined;
}

/** The UTF-8 JSON size of some tools, for `MAX_CATALOG_BYTES`. */
export function toolBytes(tools: readonly unknown[]): number {
  return Buffer.byteLength(JSON.stringify(tools), 'utf8');
}
