import { Validator } from '@seriousme/openapi-schema-validator';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_ROUTES } from '../../src/http/openapi.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { OpenApiCheck } from '../support/openapi-check.ts';

let harness: TestApp;
let document: Record<string, unknown>;

beforeAll(async () => {
  harness = await startTestApp();
  const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.json();
});
afterAll(async () => {
  await harness.close();
});

/** Every (METHOD path) the router serves, read from Fastify's own route tree. */
function servedRoutes(): Set<string> {
  const served = new Set<string>();
  const tree = harness.app.printRoutes({ commonPrefix: false, includeHooks: false });
  // Each line is `<indent>├── <segment> (METHODS)`; a segment extends its parent's path.
  const parents: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
    if (match?.[2] === undefined) continue;
    const depth = (match[1] ?? '').length / 4;
    const path = (parents[depth - 1] ?? '') + match[2];
    parents[depth] = path;
    parents.length = depth + 1;
    for (const method of (match[3] ?? '').split(',').filter((m) => m.trim() !== '')) {
      served.add(`${method.trim()} ${path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    }
  }
  return served;
}

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('lists exactly the routes the server serves', () => {
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries(document.paths as Record<string, object>)) {
      for (const method of Object.keys(operations))
        documented.add(`${method.toUpperCase()} ${path}`);
    }
    expect([...documented].sort()).toEqual([...servedRoutes()].sort());
    for (const route of REFERENCE_ROUTES) expect(documented.has(`GET ${route}`)).toBe(true);
  });

  it('documents problem answers as application/problem+json', () => {
    const paths = document.paths as Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>
    >;
    const health = paths['/health']?.get?.responses;
    expect(Object.keys(health?.['503']?.content ?? {})).toEqual(['application/problem+json']);
    expect(Object.keys(health?.['429']?.content ?? {})).toEqual(['application/problem+json']);
  });

  it('describes real answers', async () => {
    const check = new OpenApiCheck(document);
    const health = await harness.app.inject({ method: 'GET', url: '/health' });
    check.answer(
      'GET',
      '/health',
      health.statusCode,
      String(health.headers['content-type']),
      health.json(),
    );
    const openapi = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
    check.answer(
      'GET',
      '/openapi.json',
      openapi.statusCode,
      String(openapi.headers['content-type']),
      openapi.json(),
    );
  });
});

describe('the API reference page', () => {
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    url = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser.close();
  });

  it('renders the document in a real browser', async () => {
    const page = await browser.newPage();
    await page.goto(`${url}/docs`);
    await page
      .getByText('Agent Session Service', { exact: false })
      .first()
      .waitFor({ timeout: 15_000 });
    await page.getByText('/health', { exact: false }).first().waitFor({ timeout: 15_000 });
    await page.close();
  });
});
