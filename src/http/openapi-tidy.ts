/**
 * The last pass over the generated OpenAPI document: one component per schema, none that
 * nothing references, and an example on every body, path parameter and the query
 * parameters a request needs.
 *
 * One component per schema. fastify-type-provider-zod writes every registered schema
 * twice, `X` as answers serialize it and `XInput` as requests parse it. The two differ
 * only where zod's input and output differ here: an output object forbids members it
 * does not name (`additionalProperties: false`) and lists members with a default as
 * required. So the input form describes every output too, and each schema becomes one
 * component `X`: its input form when a request body reaches it, else its output form.
 *
 * Unreferenced components. The generator writes every registered schema, used or not
 * (record body schemas that serve validation only); the document keeps those its
 * operations reach.
 */
import { STATUS_CODES } from 'node:http';
import { ANSWER_EXAMPLES, INLINE_EXAMPLES } from './openapi-answers.ts';
import { plainProblem } from './openapi-problems.ts';
import {
  EXAMPLE_INSTALL,
  EXAMPLE_REQUEST,
  EXAMPLE_SESSION,
  PATH_EXAMPLES,
  QUERY_EXAMPLES,
  REQUEST_EXAMPLES,
} from './openapi-examples.ts';

type Json = Record<string, unknown>;

interface Media {
  schema?: Json;
  example?: unknown;
}
interface Parameter {
  in: string;
  name: string;
  example?: unknown;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { description?: string; content?: Record<string, Media> }>;
}

const PREFIX = '#/components/schemas/';
const INPUT = 'Input';

/** The component names `value` references, directly. */
function references(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map(
    (match) => match[1] ?? '',
  );
}

/** Every component reached from `roots`, through the components' own references. */
function reached(roots: unknown, schemas: Json): Set<string> {
  const seen = new Set<string>();
  const queue = references(roots);
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...references(schemas[name]));
  }
  return seen;
}

/** `value` with every reference to `XInput` made a reference to `X`. */
function withoutInputNames<T>(value: T, renamed: ReadonlySet<string>): T {
  return JSON.parse(
    JSON.stringify(value).replace(/"#\/components\/schemas\/([^"]+)"/g, (whole, name: string) =>
      name.endsWith(INPUT) && renamed.has(name.slice(0, -INPUT.length))
        ? `"${PREFIX}${name.slice(0, -INPUT.length)}"`
        : whole,
    ),
  ) as T;
}

function operations(paths: Json): [string, string, Operation][] {
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(
      ([method, operation]): [string, string, Operation] => [path, method, operation],
    ),
  );
}

/** The component a body's schema names, or the first of an `anyOf` of components. */
function componentOf(schema: Json | undefined): string | undefined {
  if (schema === undefined) return undefined;
  if (typeof schema.$ref === 'string') return schema.$ref.slice(PREFIX.length);
  const first = (schema.anyOf as Json[] | undefined)?.[0];
  return typeof first?.$ref === 'string' ? first.$ref.slice(PREFIX.length) : undefined;
}

/** A path parameter's example: the resource named by the path's first segment. */
function pathExample(path: string, name: string): string | undefined {
  const own = PATH_EXAMPLES[path]?.[name];
  if (own !== undefined) return own;
  if (name === 'request') return EXAMPLE_REQUEST;
  if (path.startsWith('/installs/')) return EXAMPLE_INSTALL;
  if (path.startsWith('/sessions/') || path.startsWith('/console/sessions/'))
    return EXAMPLE_SESSION;
  return undefined;
}

/** What @fastify/swagger says of an answer whose route gives no description. */
const GENERATED_DESCRIPTION = 'Default Response';

/** An answer's description: what its body's component says, else the status phrase. */
function answerDescription(
  status: string,
  content: Record<string, Media> | undefined,
  schemas: Json,
): string {
  const name = componentOf(Object.values(content ?? {})[0]?.schema);
  const described = name === undefined ? undefined : (schemas[name] as Json | undefined);
  return typeof described?.description === 'string'
    ? described.description
    : (STATUS_CODES[Number(status)] ?? 'Answer');
}

/** `path` with each parameter given its example. */
function concrete(path: string): string {
  return path.replace(/\{(\w+)\}/g, (whole, name: string) => pathExample(path, name) ?? whole);
}

function addExamples(paths: Json, schemas: Json): void {
  for (const [path, method, operation] of operations(paths)) {
    for (const parameter of operation.parameters ?? []) {
      const example =
        parameter.in === 'path'
          ? pathExample(path, parameter.name)
          : parameter.in === 'query'
            ? QUERY_EXAMPLES[path]?.[parameter.name]
            : undefined;
      if (example !== undefined) parameter.example ??= example;
    }
    for (const media of Object.values(operation.requestBody?.content ?? {})) {
      const name = componentOf(media.schema);
      if (name !== undefined && name in REQUEST_EXAMPLES) media.example ??= REQUEST_EXAMPLES[name];
    }
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (response.description === GENERATED_DESCRIPTION)
        response.description = answerDescription(status, response.content, schemas);
      for (const [type, media] of Object.entries(response.content ?? {})) {
        const inline = INLINE_EXAMPLES[`${method.toUpperCase()} ${path} ${status} ${type}`];
        const name = componentOf(media.schema);
        const example =
          inline ??
          (name === 'Problem' ? plainProblem(status, concrete(path)) : undefined) ??
          (name === undefined ? undefined : ANSWER_EXAMPLES[name]);
        if (example !== undefined) media.example ??= example;
      }
    }
  }
  for (const [name, example] of Object.entries({ ...ANSWER_EXAMPLES, ...REQUEST_EXAMPLES })) {
    const schema = schemas[name] as Json | undefined;
    if (schema !== undefined && schema.examples === undefined) schema.examples = [example];
  }
}

/**
 * The document with one component per schema, none that neither an operation nor the
 * registered record kinds (`x-record-kinds`) reference, and its examples.
 */
export function tidyDocument<
  T extends { paths?: Json; components?: { schemas?: Json }; 'x-record-kinds'?: Json },
>(document: T): T {
  const schemas = document.components?.schemas ?? {};
  const paths = document.paths ?? {};
  const renamed = new Set(
    Object.keys(schemas)
      .filter((name) => name.endsWith(INPUT) && name.slice(0, -INPUT.length) in schemas)
      .map((name) => name.slice(0, -INPUT.length)),
  );
  const fromRequests = reached(
    operations(paths).map(([, , operation]) => [operation.requestBody, operation.parameters]),
    schemas,
  );
  const merged: Json = {};
  for (const [name, schema] of Object.entries(schemas)) {
    if (name.endsWith(INPUT) && renamed.has(name.slice(0, -INPUT.length))) continue;
    const input = schemas[`${name}${INPUT}`];
    merged[name] = renamed.has(name) && fromRequests.has(`${name}${INPUT}`) ? input : schema;
  }
  const tidyPaths = withoutInputNames(paths, renamed);
  const tidySchemas = withoutInputNames(merged, renamed);
  // The registered kinds' bodies are part of the contract a tail reader needs, though no
  // operation's schema names them (a record's body is any JSON on the wire).
  const used = reached([tidyPaths, document['x-record-kinds']], tidySchemas);
  const kept = Object.fromEntries(Object.entries(tidySchemas).filter(([name]) => used.has(name)));
  addExamples(tidyPaths, kept);
  return { ...document, paths: tidyPaths, components: { ...document.components, schemas: kept } };
}
