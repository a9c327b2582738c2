import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { installErrorHandling } from '../../src/http/error-handler.ts';
import { installRateLimit, WindowCounter } from '../../src/http/rate-limit.ts';
import { startTestApp } from '../support/app.ts';

describe('WindowCounter', () => {
  it('counts a key within its window and starts afresh once the window has passed', () => {
    const counter = new WindowCounter(1000);
    expect(counter.count('a', 0)).toEqual({ start: 0, count: 1 });
    expect(counter.count('a', 999)).toEqual({ start: 0, count: 2 });
    expect(counter.count('b', 500)).toEqual({ start: 500, count: 1 });
    expect(counter.count('a', 1000)).toEqual({ start: 1000, count: 1 });
    expect(counter.count('b', 1499)).toEqual({ start: 500, count: 2 });
  });

  it('keeps at most its capacity of keys, dropping the one renewed longest ago', () => {
    const counter = new WindowCounter(1000, 2);
    counter.count('a', 0);
    counter.count('b', 10);
    counter.count('a', 1000); // a renewed: b is now the stalest
    counter.count('a', 1001);
    counter.count('c', 1002); // over capacity: b goes
    expect(counter.count('a', 1003).count).toBe(3);
    expect(counter.count('b', 1004)).toEqual({ start: 1004, count: 1 });
  });
});

describe('rate limits on routes (decisions row 86)', () => {
  async function server(clock: ManualClock) {
    const app = Fastify();
    installErrorHandling(app);
    const appWide = installRateLimit(
      app,
      { max: 2, windowMs: 1000, key: (request) => request.headers.authorization ?? request.ip },
      clock,
    );
    app.get('/limited', () => ({ ok: true }));
    app.get(
      '/own',
      { config: { rateLimit: { max: 1, windowMs: 60_000, key: () => 'one' } } },
      () => ({
        ok: true,
      }),
    );
    app.get('/free', { config: { rateLimit: false } }, () => ({ ok: true }));
    app.setNotFoundHandler({ preHandler: appWide }, (_request, reply) => reply.code(404).send());
    await app.ready();
    return app;
  }

  it('refuses past the limit with 429, Retry-After and the X-RateLimit headers until the window ends', async () => {
    const clock = new ManualClock(0);
    const app = await server(clock);
    const get = (url: string, who = 'a') =>
      app.inject({ method: 'GET', url, headers: { authorization: who } });

    const first = await get('/limited');
    expect(first.statusCode).toBe(200);
    expect(first.headers).toMatchObject({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset': '1',
    });
    expect((await get('/limited')).statusCode).toBe(200);
    clock.advance(400);
    const refused = await get('/limited');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    // Another bucket is untouched; unknown routes count against the same bucket.
    expect((await get('/limited', 'b')).statusCode).toBe(200);
    expect((await get('/nowhere')).statusCode).toBe(429);
    clock.advance(600);
    expect((await get('/limited')).statusCode).toBe(200);
    await app.close();
  });

  it("applies a route's own limit, or none when the route opts out", async () => {
    const clock = new ManualClock(0);
    const app = await server(clock);
    const get = (url: string) =>
      app.inject({ method: 'GET', url, headers: { authorization: 'a' } });
    expect((await get('/own')).statusCode).toBe(200);
    const refused = await get('/own');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.json<{ detail: string }>().detail).toBe('over 1 request in a minute');
    for (let i = 0; i < 5; i += 1) {
      const free = await get('/free');
      expect(free.statusCode).toBe(200);
      expect(free.headers['x-ratelimit-limit']).toBeUndefined();
    }
    await app.close();
  });

  it('limits the real app per credential and leaves /health unlimited', async () => {
    const clock = new ManualClock();
    const harness = await startTestApp({ rateLimitPerSecond: 1, clock });
    const health = await Promise.all(
      [1, 2, 3].map(() => harness.app.inject({ method: 'GET', url: '/health' })),
    );
    expect(health.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
    const nowhere = () =>
      harness.app.inject({
        method: 'GET',
        url: '/nowhere',
        headers: { authorization: 'Bearer x' },
      });
    expect((await nowhere()).statusCode).toBe(404);
    expect((await nowhere()).statusCode).toBe(429);
    clock.advance(1000);
    expect((await nowhere()).statusCode).toBe(404);
    await harness.close();
  });
});
