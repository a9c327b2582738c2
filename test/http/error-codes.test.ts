/**
 * The catalog of error codes is the OpenAPI document's: `GET /openapi.json` lists every
 * code of `src/error-codes.ts` with its status and meaning, each documented problem
 * answer names the codes of its status, and the service answers a code at the status the
 * catalog gives it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_CODE_NAMES, statusOf, type ErrorCode } from '../../src/error-codes.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

interface Schema {
  readonly $ref?: string;
  readonly enum?: readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
}

interface Response {
  readonly description: string;
  readonly content?: Readonly<Record<string, unknown>>;
}

interface Document {
  readonly paths: Readonly<
    Record<string, Readonly<Record<string, { responses?: Readonly<Record<string, Response>> }>>>
  >;
  readonly components: { readonly schemas: Readonly<Record<string, Schema>> };
}

let harness: TestApp;
let document: Document;

beforeAll(async () => {
  harness = await startTestApp();
  const answer = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(answer.statusCode).toBe(200);
  document = answer.json();
});
afterAll(async () => {
  await harness.close();
});

const LEAD = 'Codes of this status across the API:';

/** The catalog codes a description names as `` `code` ``. */
function named(description: string): string[] {
  return [...description.matchAll(/`([a-z0-9_]+)`/g)]
    .map((match) => match[1] ?? '')
    .filter((word) => (ERROR_CODE_NAMES as readonly string[]).includes(word));
}

describe('the error codes in GET /openapi.json', () => {
  it('are one component, the enum of every problem schema, in catalog order', () => {
    const { schemas } = document.components;
    expect(schemas.ErrorCode?.enum).toEqual(ERROR_CODE_NAMES);
    const problems = Object.keys(schemas).filter((name) => /Problem(Input)?$/.test(name));
    expect(problems).toContain('Problem');
    expect(problems).toContain('FilterRefusedProblem');
    for (const name of problems) {
      const code = schemas[name]?.properties?.code;
      expect(code?.$ref, name).toMatch(/^#\/components\/schemas\/ErrorCode(Input)?$/);
    }
  });

  it('are each described with their status and meaning', () => {
    const description = document.components.schemas.ErrorCode?.description ?? '';
    for (const code of ERROR_CODE_NAMES) {
      const { status, meaning } = ERROR_CODES[code];
      expect(description).toContain(
        `| \`${code}\` | ${status} | ${meaning.replaceAll('|', '\\|')} |`,
      );
    }
  });

  it('are named by every problem answer of their status', () => {
    let answers = 0;
    for (const [route, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          if (response.content?.['application/problem+json'] === undefined) continue;
          answers += 1;
          const where = `${method.toUpperCase()} ${route} ${status}: ${response.description}`;
          const codes = named(response.description);
          const ofStatus = ERROR_CODE_NAMES.filter((code) => String(statusOf(code)) === status);
          // problemResponses lists every code of the status; an answer written for one
          // route names its own, which must be of its status.
          if (response.description.includes(LEAD)) expect(codes, where).toEqual(ofStatus);
          expect(codes.length, where).toBeGreaterThan(0);
          for (const code of codes) expect(ofStatus, where).toContain(code);
        }
      }
    }
    expect(answers).toBeGreaterThan(100);
  });
});

describe('an error answer', () => {
  it('carries a catalog code at the status the catalog gives it', async () => {
    const answers = await Promise.all([
      harness.app.inject({ method: 'GET', url: '/no/such/route' }),
      harness.app.inject({ method: 'GET', url: '/sessions' }),
      harness.app.inject({
        method: 'POST',
        url: '/appdoc',
        headers: { 'content-type': 'application/json' },
        payload: '{"appdoc": ',
      }),
      harness.app.inject({
        method: 'POST',
        url: '/appdoc',
        headers: { 'content-type': 'text/plain' },
        payload: 'hello',
      }),
    ]);
    const seen = answers.map((answer) => {
      const { code } = answer.json<{ code: ErrorCode }>();
      expect(ERROR_CODE_NAMES).toContain(code);
      expect(answer.statusCode, code).toBe(statusOf(code));
      return code;
    });
    expect(seen).toEqual([
      'route_not_found',
      'unauthenticated',
      'malformed_json',
      'unsupported_media_type',
    ]);
  });
});
