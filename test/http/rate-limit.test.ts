import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_FAMILIES, type RateFamily, type RateLimits } from '../../src/http/rate-limit.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/**
 * The family of every route the service serves: every cell decided, so
 * a new route must be placed here. `null`: never limited.
 */
const FAMILIES: Readonly<Record<string, RateFamily | null>> = {
  'GET /health': null,
  'GET /health/live': null,
  'GET /health/ready': null,
  'GET /openapi.json': null,
  'GET /metrics': 'open',
  'GET /consent/oauth4webapi.js': 'open',
  'GET /consent/client/{module}': null,
  'GET /consent/client/executor/{module}': null,
  'GET /consent/signed-in': 'open',
  'GET /console': 'open',
  'GET /console/oauth4webapi.js': 'open',
  'GET /console/statecharts': 'open',
  'GET /console/statecharts/{machine}': 'open',
  'GET /console/client/{module}': null,
  'GET /console/client/executor/{module}': null,
  'GET /docs': 'open',
  'GET /docs/': 'open',
  'GET /docs/js/scalar.js': 'open',
  'GET /.well-known/jwks.json': 'open',
  'POST /console/token': 'open',
  'POST /consent/token': 'open',
  'GET /sessions/{id}/executor/token': 'open',
  'GET /connections/callback': 'open',
  'POST /appdoc': 'appdoc',
  'POST /sessions/{id}/events': 'appends',
  'GET /sessions/{id}/events': 'tails',
  'GET /console/sessions/{id}/events': 'tails',
  'POST /sessions': 'sessions',
  'GET /sessions': 'sessions',
  'GET /sessions/{id}/token': 'sessions',
  'GET /sessions/{id}/status': 'sessions',
  'POST /sessions/{id}/executor/claim': 'sessions',
  'POST /sessions/{id}/archive': 'sessions',
  'GET /appdoc': 'sessions',
  'POST /installs/{id}/proposals': 'sessions',
  'PUT /console/tenant': 'console',
  'GET /console/memberships': 'console',
  'GET /console/tenant': 'console',
  'GET /console/sessions': 'console',
  'POST /console/sessions/{id}/token': 'console',
  'POST /console/sessions/{id}/archive': 'console',
  'PUT /secrets/{id}': 'console',
  'DELETE /secrets/{id}': 'console',
  'GET /secrets': 'console',
  'PUT /inferences/{id}': 'console',
  'GET /inferences/{id}': 'console',
  'DELETE /inferences/{id}': 'console',
  'GET /inferences': 'console',
  'GET /usage': 'console',
  'PUT /connections/{id}': 'console',
  'GET /connections/{id}': 'console',
  'DELETE /connections/{id}': 'console',
  'GET /connections': 'console',
  'POST /connections/{id}/authorize': 'console',
  'GET /consent/{request}': 'console',
  'POST /consent/{request}': 'console',
  'POST /consent/{request}/decline': 'console',
  'GET /installs': 'console',
  'GET /installs/{id}': 'console',
  'PUT /installs/{id}': 'console',
  'DELETE /installs/{id}': 'console',
  'POST /installs/{id}/key': 'console',
  'DELETE /installs/{id}/key': 'console',
};

const limitsOf = (max: number, windowMs: number): RateLimits =>
  Object.fromEntries(RATE_FAMILIES.map((family) => [family, { max, windowMs }])) as RateLimits;

describe('route families', () => {
  let harness: TestApp;
  beforeAll(async () => {
    // No request is allowed: each answer names the family that refused it.
    harness = await startTestApp({ rateLimits: limitsOf(0, 60_000) });
  });
  afterAll(() => harness.close());

  it('puts every documented route in the family the table names', async () => {
    const document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, unknown>>;
    }>();
    const served = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(served.sort()).toEqual(Object.keys(FAMILIES).sort());
    for (const [route, family] of Object.entries(FAMILIES)) {
      const [method = '', path = ''] = route.split(' ');
      const answer = await harness.app.inject({
        method: method as 'GET',
        url: path.replaceAll(/\{[a-z]+\}/g, 'x'),
        headers: { authorization: 'Bearer not-a-credential' },
      });
      if (family === null) {
        expect(answer.statusCode, route).not.toBe(429);
        expect(answer.headers['ratelimit-limit'], route).toBeUndefined();
      } else {
        expect(answer.statusCode, route).toBe(429);
        expect(answer.json<{ detail: string }>().detail, route).toContain(`(${family})`);
      }
    }
  });

  it('counts unknown routes in the open family', async () => {
    const answer = await harness.app.inject({ method: 'GET', url: '/nowhere' });
    expect(answer.statusCode).toBe(429);
    expect(answer.json<{ detail: string }>().detail).toContain('(open)');
  });
});

describe('rate limits on the real app (decisions row 86)', () => {
  it('refuses past the limit with 429, Retry-After, the RateLimit headers and a problem, until the window ends', async () => {
    const harness = await startTestApp({ rateLimits: { open: { max: 2, windowMs: 1000 } } });
    const get = (address: string) =>
      harness.app.inject({ method: 'GET', url: '/nowhere', remoteAddress: address });
    const first = await get('192.0.2.1');
    expect(first.statusCode).toBe(404);
    expect(first.headers).toMatchObject({
      'ratelimit-limit': '2',
      'ratelimit-remaining': '1',
      'ratelimit-reset': '1',
    });
    expect((await get('192.0.2.1')).statusCode).toBe(404);
    const refused = await get('192.0.2.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers).toMatchObject({
      'retry-after': '1',
      'ratelimit-limit': '2',
      'ratelimit-remaining': '0',
    });
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({
      type: 'about:blank',
      status: 429,
      code: 'rate_limited',
      detail: 'over 2 requests in a second (open); retry in 1 second',
    });
    // Another address has its own bucket; this one starts afresh once its window ends.
    expect((await get('192.0.2.2')).statusCode).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await get('192.0.2.1')).statusCode).toBe(404);
    await harness.close();
  });

  it('leaves /health and /openapi.json unlimited', async () => {
    const harness = await startTestApp({ rateLimits: limitsOf(1, 60_000) });
    for (let i = 0; i < 5; i += 1) {
      const health = await harness.app.inject({ method: 'GET', url: '/health' });
      const document = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
      expect([health.statusCode, document.statusCode]).toEqual([200, 200]);
    }
    await harness.close();
  });

  it('believes X-Forwarded-For only from the proxies TRUST_PROXY names', async () => {
    const proxied = await startTestApp({
      rateLimits: { open: { max: 1, windowMs: 60_000 } },
      trustProxy: ['192.0.2.10'],
    });
    const get = (harness: TestApp, from: string, client: string) =>
      harness.app.inject({
        method: 'GET',
        url: '/nowhere',
        remoteAddress: from,
        headers: { 'x-forwarded-for': client },
      });
    // Through the proxy each client has its own bucket.
    expect((await get(proxied, '192.0.2.10', '198.51.100.1')).statusCode).toBe(404);
    expect((await get(proxied, '192.0.2.10', '198.51.100.2')).statusCode).toBe(404);
    expect((await get(proxied, '192.0.2.10', '198.51.100.1')).statusCode).toBe(429);
    // A peer that is not the proxy cannot pick its bucket by the header.
    expect((await get(proxied, '192.0.2.11', '198.51.100.3')).statusCode).toBe(404);
    expect((await get(proxied, '192.0.2.11', '198.51.100.4')).statusCode).toBe(429);
    await proxied.close();

    // Off, the default: the header is never believed.
    const direct = await startTestApp({ rateLimits: { open: { max: 1, windowMs: 60_000 } } });
    expect((await get(direct, '192.0.2.10', '198.51.100.1')).statusCode).toBe(404);
    expect((await get(direct, '192.0.2.10', '198.51.100.2')).statusCode).toBe(429);
    await direct.close();
  });
});
