/**
 * Checks real answers against the served OpenAPI document: the route, status and media
 * type must be documented, and the body must validate against the documented schema.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';

type Json = Record<string, unknown>;

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Json }> }>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export class OpenApiCheck {
  readonly #document: Json;
  readonly #ajv: Ajv2020;

  constructor(document: Json) {
    this.#document = document;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema({ ...document, $id: 'openapi' }, 'openapi');
  }

  /** The documented operation for a concrete path (`/sessions/abc/events` → `/sessions/{id}/events`). */
  operation(method: string, path: string): Operation {
    const paths = (this.#document.paths ?? {}) as Record<string, Record<string, Operation>>;
    const bare = path.split('?')[0] ?? path;
    // A static path wins over a parameter, as in the router (`/connections/callback`).
    const exact = paths[bare]?.[method.toLowerCase()];
    if (exact !== undefined) return exact;
    for (const [template, operations] of Object.entries(paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const operation = operations[method.toLowerCase()];
      if (pattern.test(bare) && operation !== undefined) return operation;
    }
    throw new Error(`${method} ${bare} is not in the OpenAPI document`);
  }

  /** Asserts the answer is documented and its body fits the documented schema. */
  answer(method: string, path: string, status: number, contentType: string, body: unknown): void {
    const operation = this.operation(method, path);
    const response = operation.responses?.[String(status)];
    expect(response, `${method} ${path} documents status ${status}`).toBeDefined();
    const mediaType = contentType.split(';')[0]?.trim() ?? '';
    const content = response?.content;
    if (content === undefined) return;
    const media = content[mediaType];
    expect(media, `${method} ${path} ${status} documents ${mediaType}`).toBeDefined();
    if (media?.schema === undefined) return;
    const validate = this.#ajv.compile(rebase(media.schema));
    const ok = validate(body);
    expect(ok, JSON.stringify(validate.errors)).toBe(true);
  }
}

/** Rewrites `#/components/...` refs to point into the registered document. */
function rebase(schema: Json): Json {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'),
  ) as Json;
}
