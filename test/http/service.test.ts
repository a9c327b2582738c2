import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

describe('health', () => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp();
  });
  afterAll(async () => {
    await harness.close();
  });

  it('answers 200 while the stores answer', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: 'ok',
      checks: {
        log: { backend: harness.stores.log.backend, status: 'ok' },
        control: { backend: harness.stores.control.backend, status: 'ok' },
      },
    });
  });

  it('answers 503 naming the failing part once a store stops answering', async () => {
    const broken = await startTestApp();
    await broken.stores.log.close();
    const response = await broken.app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = response.json<Record<string, unknown>>();
    expect(body).toMatchObject({
      code: 'unhealthy',
      checks: { log: { status: 'failing' }, control: { status: 'ok' } },
    });
    expect(String(body.message)).toContain('log store');
    await broken.close();
  });
});

describe('rate limits (decisions row 86)', () => {
  it('answers 429 with Retry-After once a client passes its limit; another address has its own', async () => {
    const harness = await startTestApp({ rateLimits: { open: { max: 3, windowMs: 60_000 } } });
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 5; i += 1) {
      last = await harness.app.inject({
        method: 'GET',
        url: '/nowhere',
        // A bearer no route verified: it counts against the address, whatever it is.
        headers: { authorization: `Bearer unverified-${String(i)}` },
        remoteAddress: '192.0.2.1',
      });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([404, 404, 404, 429, 429]);
    expect(last?.headers['retry-after']).toMatch(/^\d+$/);
    expect(last?.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(last?.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    const other = await harness.app.inject({
      method: 'GET',
      url: '/nowhere',
      remoteAddress: '192.0.2.2',
    });
    expect(other.statusCode).toBe(404);
    await harness.close();
  });
});

describe('logging', () => {
  it('writes one line per request with its id and never a credential', async () => {
    const harness = await startTestApp();
    const secrets = {
      bearer: 'eyJhbGciOiJFZERTQSJ9.c2VjcmV0LXBheWxvYWQ.c2lnbmF0dXJl',
      query: 'ik_QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE',
      cookie: 'session=very-secret-cookie',
    };
    const response = await harness.app.inject({
      method: 'GET',
      url: `/health?access_token=${secrets.query}&other=1`,
      headers: {
        authorization: `Bearer ${secrets.bearer}`,
        cookie: secrets.cookie,
        'x-request-id': 'trace-123',
      },
    });
    expect(response.headers['x-request-id']).toBe('trace-123');
    harness.deps.logger.info({ token: secrets.bearer, nested: { key: secrets.query } }, 'issued');
    const text = harness.logs.text();
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    const requests = harness.logs.lines().filter((line) => line.msg === 'request');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ reqId: 'trace-123', method: 'GET', status: 200 });
    expect(String(requests[0]?.url)).toContain('access_token=%5BRedacted%5D');
    await harness.close();
  });

  it('writes an error through the request logger with the request id, redacted', async () => {
    const secret = 'eyJhbGciOiJFZERTQSJ9.ZXJyb3Itc2VjcmV0.c2lnbmF0dXJl';
    const harness = await startTestApp({
      routes: (app) => {
        app.get('/probe/fails', () => {
          throw Object.assign(new Error('the probe failed'), { token: secret });
        });
      },
    });
    const response = await harness.app.inject({
      method: 'GET',
      url: '/probe/fails',
      headers: { 'x-request-id': 'trace-500' },
    });
    expect(response.statusCode).toBe(500);
    const failed = harness.logs.lines().filter((line) => line.msg === 'request failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ reqId: 'trace-500', err: { token: '[Redacted]' } });
    expect(harness.logs.text()).not.toContain(secret);
    await harness.close();
  });
});
