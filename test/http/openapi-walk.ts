/**
 * Walks the served OpenAPI document: its operations, and the bodies (media objects) of
 * their requests and answers, each named `METHOD path` for the messages of a test.
 */
export type Json = Record<string, unknown>;
export interface Media {
  schema?: Json;
  example?: unknown;
}
export interface Operation {
  parameters?: {
    in: string;
    name: string;
    required?: boolean;
    schema?: Json;
    example?: unknown;
  }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

/** The served document, as far as these tests read it. */
export type Document = Json & {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: { readonly schemas: Json };
};

/** Every operation of the document, named `METHOD path`. */
export function allOperations(document: Document): [string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, Operation] => [
      `${method.toUpperCase()} ${path}`,
      op,
    ]),
  );
}

/** Every (operation, place, media) of the document: request bodies and answers. */
export function allMedia(document: Document): [string, Media][] {
  return allOperations(document).flatMap(([name, op]) => [
    ...Object.entries(op.requestBody?.content ?? {}).map(([type, media]): [string, Media] => [
      `${name} request ${type}`,
      media,
    ]),
    ...Object.entries(op.responses).flatMap(([status, response]) =>
      Object.entries(response.content ?? {}).map(([type, media]): [string, Media] => [
        `${name} ${status} ${type}`,
        media,
      ]),
    ),
  ]);
}
