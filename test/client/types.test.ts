/**
 * The client's types are generated from the served document, and the
 * check `npm run check` runs (`npm run client:types:check`) fails when a route's schema
 * changes without regeneration.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_TYPES_FILE,
  renderClientTypes,
  staleClientTypes,
} from '../../scripts/client-types/generate.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

type Json = Record<string, unknown>;

let harness: TestApp;
let document: Json;
let committed: string;

beforeAll(async () => {
  harness = await startTestApp();
  document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<Json>();
  committed = await readFile(path.join(ROOT, CLIENT_TYPES_FILE), 'utf8');
});
afterAll(async () => {
  await harness.close();
});

/** The document's operation at `route` and `method`. */
function operation(doc: Json, route: string, method: string): Json {
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const found = paths[route]?.[method];
  if (found === undefined) throw new Error(`${method} ${route} is not documented`);
  return found;
}

describe('the client types', () => {
  it('are what the served document makes now', async () => {
    expect(await staleClientTypes(document, ROOT, committed)).toBe(false);
    expect(committed).toContain("'/sessions/{id}/events': {");
  });

  it('are stale when a route’s answer gains a field', async () => {
    const changed = structuredClone(document);
    const answer = operation(changed, '/sessions/{id}/status', 'get');
    const responses = answer.responses as Record<string, Json>;
    const content = responses['200']?.content as Record<string, { schema: Json }>;
    const json = content['application/json'];
    if (json === undefined) throw new Error('status documents no JSON answer');
    json.schema = {
      type: 'object',
      properties: { client_types_probe: { type: 'string' } },
      required: ['client_types_probe'],
    };
    expect(await staleClientTypes(changed, ROOT, committed)).toBe(true);
    expect(await renderClientTypes(changed, ROOT)).toContain('client_types_probe: string;');
  });

  it('are stale when a route’s query changes or a route goes', async () => {
    const query = structuredClone(document);
    const tail = operation(query, '/sessions/{id}/events', 'get');
    (tail.parameters as Json[]).push({
      name: 'client_types_probe',
      in: 'query',
      required: true,
      schema: { type: 'string' },
    });
    expect(await staleClientTypes(query, ROOT, committed)).toBe(true);

    const gone = structuredClone(document);
    delete (gone.paths as Record<string, unknown>)['/sessions/{id}/status'];
    expect(await staleClientTypes(gone, ROOT, committed)).toBe(true);
  });

  it('are stale when the committed file was edited by hand', async () => {
    const edited = committed.replace('export interface paths {', 'export interface paths {\n');
    expect(await staleClientTypes(document, ROOT, edited)).toBe(true);
  });
});
