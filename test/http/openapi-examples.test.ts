/**
 * The reference page's examples are there and right: the served document has one
 * component per schema and none unreferenced, cites no document a client lacks, and has
 * an example for every request and answer body and every parameter a request needs, each
 * fitting its schema. `openapi-story.test.ts` sends them.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { allMedia, allOperations, type Document, type Json } from './openapi-walk.ts';

let harness: TestApp;
let document: Document;

beforeAll(async () => {
  harness = await startTestApp();
  const answer = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
  document = answer.json();
});
afterAll(async () => {
  await harness.close();
});

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1 and references every component it holds', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    const names = Object.keys(document.components.schemas);
    expect(
      names.filter((name) => name.endsWith('Input') && names.includes(name.slice(0, -5))),
    ).toEqual([]);
    const text = JSON.stringify(document);
    const unreferenced = names.filter((name) => !text.includes(`"#/components/schemas/${name}"`));
    expect(unreferenced).toEqual([]);
  });

  it('points at no document a client does not have', () => {
    // Neither decision rows nor sections of the interface document: a clone has neither.
    const citing = /"[^"]*(?:decisions|\brows? \d|\(§?\d+\.\d+\))[^"]*"/gi;
    expect(JSON.stringify(document).match(citing) ?? []).toEqual([]);
  });

  it('has an example for every request and answer body', () => {
    const missing = allMedia(document).flatMap(([name, media]) =>
      media.example === undefined ? [name] : [],
    );
    expect(missing).toEqual([]);
  });

  it('has an example for every path parameter and every required query parameter', () => {
    const missing = allOperations(document).flatMap(([name, op]) =>
      (op.parameters ?? [])
        .filter(
          (p) =>
            (p.in === 'path' || (p.in === 'query' && p.required === true)) &&
            p.example === undefined,
        )
        .map((p) => `${name} ${p.in} ${p.name}`),
    );
    expect(missing).toEqual([]);
  });

  it('has examples that fit their schemas', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020)(ajv);
    ajv.addSchema({ ...document, $id: 'openapi' }, 'openapi');
    const unfit: string[] = [];
    const check = (name: string, schema: Json | undefined, example: unknown) => {
      if (schema === undefined || example === undefined) return;
      const rebased = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'),
      ) as Json;
      const validate = ajv.compile(rebased);
      if (!validate(example)) unfit.push(`${name}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const [name, media] of allMedia(document)) {
      // Pages and scripts are shown as text; their schema is a plain string.
      if (typeof media.example !== 'string') check(name, media.schema, media.example);
    }
    for (const [name, op] of allOperations(document)) {
      for (const p of op.parameters ?? []) check(`${name} ${p.in} ${p.name}`, p.schema, p.example);
    }
    expect(unfit).toEqual([]);
  });
});
