/**
 * Finding a policy's arg in a tool's input schema (decisions row 26: "input-schema
 * property (dotted), must exist") and reading what the schema declares about it.
 *
 * The walk follows `properties` one dotted segment at a time and resolves local `$ref`s
 * (`#/$defs/…`, `#/definitions/…`) on the way, which is how MCP servers and zod emit
 * nested objects. It does not look inside `anyOf`/`oneOf`/`allOf`: a property reachable
 * only through a combinator does not exist for a policy, and a property whose own
 * schema is a combinator has no declared type (its operands are not type-checked).
 */
import { argSegments, isJsonObject } from './json-path.ts';

/** What the input schema declares about one property; null where it declares nothing. */
export interface PropertyShape {
  /** The JSON Schema `type` names, or null when the schema gives none. */
  readonly types: readonly string[] | null;
  /** The only values allowed (`enum`, or `const` as a one-value enum), or null. */
  readonly values: readonly unknown[] | null;
}

export type ArgResolution =
  | { readonly ok: true; readonly shape: PropertyShape }
  | { readonly ok: false; readonly reason: string };

/** More `$ref` hops than this is a cycle or abuse; the property then declares nothing. */
const MAX_REF_HOPS = 32;

/** The node a JSON pointer fragment (`#/$defs/point`) names in `root`, or undefined. */
function pointerTarget(root: unknown, ref: string): unknown {
  let tokens: string[];
  try {
    tokens = decodeURIComponent(ref.slice(1)).split('/').slice(1);
  } catch {
    return undefined;
  }
  let node = root;
  for (const raw of tokens) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node) && /^(?:0|[1-9]\d*)$/.test(token)) {
      node = node[Number(token)] as unknown;
    } else if (isJsonObject(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else {
      return undefined;
    }
  }
  return node;
}

/** `node` with local `$ref`s followed; a remote or broken ref leaves a schema that declares nothing. */
function dereference(root: unknown, node: unknown): unknown {
  let current = node;
  for (let hops = 0; isJsonObject(current) && typeof current.$ref === 'string'; hops += 1) {
    if (hops === MAX_REF_HOPS || !current.$ref.startsWith('#')) {
      return {};
    }
    current = pointerTarget(root, current.$ref);
  }
  return current;
}

function shapeOf(schema: unknown): PropertyShape {
  if (!isJsonObject(schema)) {
    // A boolean schema (`true`/`false`) declares no type.
    return { types: null, values: null };
  }
  const type = schema.type;
  const types =
    typeof type === 'string'
      ? [type]
      : Array.isArray(type)
        ? type.filter((name): name is string => typeof name === 'string')
        : null;
  const values = Object.hasOwn(schema, 'const')
    ? [schema.const]
    : Array.isArray(schema.enum)
      ? (schema.enum as readonly unknown[])
      : null;
  return { types, values };
}

/**
 * Resolves a dotted `arg` against a tool's input schema: the property's declared shape,
 * or why no such property exists (a reason phrased to follow the field name).
 */
export function resolveArg(inputSchema: unknown, arg: string): ArgResolution {
  let node = dereference(inputSchema, inputSchema);
  const walked: string[] = [];
  for (const segment of argSegments(arg)) {
    const properties = isJsonObject(node) ? dereference(inputSchema, node.properties) : undefined;
    if (!isJsonObject(properties) || !Object.hasOwn(properties, segment)) {
      const where =
        walked.length === 0 ? 'the input schema' : `${walked.join('.')} in the input schema`;
      return {
        ok: false,
        reason: `names no property: ${where} has no property ${JSON.stringify(segment)}`,
      };
    }
    walked.push(segment);
    node = dereference(inputSchema, properties[segment]);
  }
  return { ok: true, shape: shapeOf(node) };
}
