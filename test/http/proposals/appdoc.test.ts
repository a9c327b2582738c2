/**
 * `POST /appdoc`, `GET /appdoc` and `POST /installs/{id}/proposals` (4.1, 2.8, §7;
 * decisions rows 16 to 22, 29, 86): every section 7 condition sees its status and code.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { OpenApiCheck } from '../../support/openapi-check.ts';
import type { TestApp } from '../../support/app.ts';
import {
  conforms,
  consent,
  flowApp,
  keyHeaders,
  openApi,
  ownerWithOption,
  poll,
  propose,
  vendorDoc,
  installFor,
} from './flow-client.ts';

let harness: TestApp;
let clock: ManualClock;
let check: OpenApiCheck;

beforeAll(async () => {
  // Room for a document near the 1 MiB bound of row 20.
  ({ harness, clock } = await flowApp({ bodyLimit: 1024 * 1024 }));
  check = await openApi(harness);
});
afterAll(async () => {
  await harness.close();
});

const tool = (overrides: Record<string, unknown> = {}) => ({
  name: 'lookup',
  description: 'Look something up.',
  input_schema: { type: 'object', properties: { q: { type: 'string' } } },
  output_schema: { type: 'object' },
  ...overrides,
});

/** A consented install and its key. */
async function installed(): Promise<{ install: string; key: string }> {
  const owner = await ownerWithOption(harness);
  const proposal = await propose(harness);
  const granted = await consent(harness, owner, proposal.request, { inference: 'fast' });
  expect(granted.statusCode, granted.body).toBe(200);
  const receipt = await poll(harness, proposal);
  return receipt.json<{ install: string; key: string }>();
}

describe('POST /appdoc', () => {
  it('answers a proposal (2.8); two posts of one document are two requests', async () => {
    const doc = vendorDoc();
    const first = await harness.app.inject({ method: 'POST', url: '/appdoc', payload: doc });
    const second = await harness.app.inject({ method: 'POST', url: '/appdoc', payload: doc });
    conforms(check, 'POST', '/appdoc', first);
    const a = first.json<Record<string, unknown>>();
    const b = second.json<Record<string, unknown>>();
    expect(a.request).not.toBe(b.request);
    expect(a.poll_secret).not.toBe(b.poll_secret);
    expect(a.vendor).toBe(b.vendor);
    expect(a).toMatchObject({ expires: clock.now() + 600_000, interval: 5000 });
  });

  it.each([
    ['name', { name: 'n'.repeat(129) }, 'body.name', 'must be at most 128 characters'],
    ['an empty name', { name: '' }, 'body.name', 'must not be empty'],
    ['description', { description: 'd'.repeat(4097) }, 'body.description', '4096'],
    [
      'tool count',
      { tools: Array.from({ length: 129 }, (_, i) => tool({ name: `t${i}` })) },
      'body.tools',
      '128',
    ],
    ['tool name', { tools: [tool({ name: 'bad name' })] }, 'body.tools.0.name', 'A-Z'],
    ['a duplicate tool', { tools: [tool(), tool()] }, 'body.tools.1.name', 'duplicates'],
    ['appdoc', { appdoc: 2 }, 'body.appdoc', 'must be 1'],
    ['a missing appdoc', { appdoc: undefined }, 'body.appdoc', 'is required'],
    [
      'schema type',
      { tools: [tool({ input_schema: { type: 'string' } })] },
      'body.tools.0.input_schema.type',
      'object',
    ],
    [
      'result_limit',
      { tools: [tool({ result_limit: 0 })] },
      'body.tools.0.result_limit',
      '1048576',
    ],
    [
      'timeout',
      { tools: [tool({ timeout: '16m' })] },
      'body.tools.0.timeout',
      'must be a duration from',
    ],
    [
      'schema size',
      { tools: [tool({ input_schema: { type: 'object', description: 'x'.repeat(70_000) } })] },
      'body.tools.0.input_schema',
      '65536 bytes',
    ],
  ])(
    'refuses a bad %s naming the field and reason, storing nothing',
    async (_, change, field, reason) => {
      const before = (await harness.stores.control.list('proposal', '')).length;
      const response = await harness.app.inject({
        method: 'POST',
        url: '/appdoc',
        payload: { ...vendorDoc(), ...change },
      });
      conforms(check, 'POST', '/appdoc', response);
      expect(response.statusCode).toBe(400);
      const problem = response.json<{ code: string; field: string; reason: string }>();
      expect(problem.code).toBe('invalid_request');
      expect(problem.field).toBe(field);
      expect(problem.reason).toContain(reason);
      expect((await harness.stores.control.list('proposal', '')).length).toBe(before);
    },
  );

  it('refuses a document over the 1 MiB request bound (413) and a body that is not JSON (415)', async () => {
    const huge = vendorDoc({ description: 'x'.repeat(1024 * 1024) });
    const tooLarge = await harness.app.inject({ method: 'POST', url: '/appdoc', payload: huge });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ code: 'payload_too_large' });
    const text = await harness.app.inject({
      method: 'POST',
      url: '/appdoc',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    conforms(check, 'POST', '/appdoc', text);
  });
});

describe('POST /appdoc rate limit (decisions row 86)', () => {
  it('allows its own number of proposals per minute per address', async () => {
    const { harness: limited } = await flowApp({
      rateLimits: { appdoc: { max: 2, windowMs: 60_000 } },
    });
    try {
      const post = (ip: string) =>
        limited.app.inject({
          method: 'POST',
          url: '/appdoc',
          payload: vendorDoc(),
          remoteAddress: ip,
        });
      expect((await post('10.0.0.1')).statusCode).toBe(201);
      expect((await post('10.0.0.1')).statusCode).toBe(201);
      const third = await post('10.0.0.1');
      expect(third.statusCode).toBe(429);
      expect(third.json()).toMatchObject({ code: 'rate_limited' });
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect((await post('10.0.0.2')).statusCode).toBe(201);
    } finally {
      await limited.close();
    }
  });
});

describe('GET /appdoc', () => {
  it('refuses no key (401 unauthenticated) and a key no install answers (401 invalid_token)', async () => {
    const none = await harness.app.inject({ method: 'GET', url: '/appdoc' });
    conforms(check, 'GET', '/appdoc', none);
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ code: 'unauthenticated' });
    expect(none.headers['www-authenticate']).toBe('Bearer');
    for (const key of [
      `ik_${randomBytes(32).toString('base64url')}`,
      'ik_short',
      `ps_${randomBytes(32).toString('base64url')}`,
    ]) {
      const refused = await harness.app.inject({
        method: 'GET',
        url: '/appdoc',
        headers: keyHeaders(key),
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toMatchObject({ code: 'invalid_token' });
    }
  });

  it('answers the composed document, and 404 install_gone once the install is deleted', async () => {
    const owner = await ownerWithOption(harness);
    const { install, key } = await installFor(harness, owner);
    const served = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    conforms(check, 'GET', '/appdoc', served);
    expect(served.statusCode).toBe(200);
    const deleted = await harness.app.inject({
      method: 'DELETE',
      url: `/installs/${install}`,
      headers: owner.headers,
    });
    expect(deleted.statusCode).toBe(204);
    const gone = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    conforms(check, 'GET', '/appdoc', gone);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ code: 'install_gone' });
  });
});

describe('POST /installs/{id}/proposals', () => {
  it('needs a key (401) that names the install (403), and a valid document (400)', async () => {
    const mine = await installed();
    const theirs = await installed();
    const url = `/installs/${theirs.install}/proposals`;
    const noKey = await harness.app.inject({ method: 'POST', url, payload: vendorDoc() });
    expect(noKey.statusCode).toBe(401);
    conforms(check, 'POST', url, noKey);
    const wrong = await harness.app.inject({
      method: 'POST',
      url,
      headers: keyHeaders(mine.key),
      payload: vendorDoc(),
    });
    conforms(check, 'POST', url, wrong);
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json()).toMatchObject({ code: 'wrong_install' });
    const invalid = await harness.app.inject({
      method: 'POST',
      url,
      headers: keyHeaders(theirs.key),
      payload: vendorDoc({ tools: [tool({ output_schema: { type: 'array' } })] as never }),
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ field: 'body.tools.0.output_schema.type' });
    const ok = await harness.app.inject({
      method: 'POST',
      url,
      headers: keyHeaders(theirs.key),
      payload: vendorDoc(),
    });
    conforms(check, 'POST', url, ok);
    expect(ok.statusCode).toBe(201);
  });
});
