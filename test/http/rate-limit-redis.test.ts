/**
 * Rate limits over real HTTP with their counts in real Redis: random
 * bearers are one client, a verified credential has a bucket of its own. Each test sends
 * from a loopback address of its own (`loopback-client.ts`), since the address buckets
 * live in a Redis other suites share.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestApp, type TestApp } from '../support/app.ts';
import { TEST_REDIS_URL } from '../support/services.ts';
import { listeningClient, type TurnClient } from '../turns/turn-client.ts';
import { countStatuses, LoopbackClient, type Answer } from './loopback-client.ts';

const LIMIT = 20;
const MINUTE = 60_000;

/**
 * A bearer no service issued: random text, an install key of the right shape, or a
 * well-formed JWT with a made-up signature.
 */
function randomBearer(i: number): string {
  if (i % 3 === 0) return randomBytes(24).toString('base64url');
  if (i % 3 === 1) return `ik_${randomBytes(32).toString('base64url')}`;
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = part({ alg: 'EdDSA', typ: 'JWT' });
  const claims = part({ sub: 'principal:mallory', sid: randomUUID(), aud: 'session' });
  return `${header}.${claims}.${randomBytes(64).toString('base64url')}`;
}

const cancel = [{ kind: { name: 'turn.cancel', version: 1 }, body: { turn: null } }];

describe('rate limits in Redis over real HTTP', () => {
  let harness: TestApp;
  let client: TurnClient;
  let base: string;

  beforeAll(async () => {
    harness = await startTestApp({
      redisUrl: TEST_REDIS_URL,
      // A minute's window: each count below is exact, whatever the machine's speed.
      rateLimits: {
        appends: { max: LIMIT, windowMs: MINUTE },
        sessions: { max: LIMIT, windowMs: MINUTE },
        console: { max: LIMIT, windowMs: MINUTE },
        tails: { max: LIMIT, windowMs: MINUTE },
      },
    });
    client = await listeningClient(harness);
    base = client.base;
  });
  afterAll(() => harness.close());

  it('limits 1,000 requests with random bearer tokens like one client, by its address', async () => {
    const attacker = new LoopbackClient(base);
    const session = randomBytes(36).toString('hex');
    const answers = await attacker.many(1000, 32, (i) =>
      attacker.request('POST', `/sessions/${session}/events`, {
        token: randomBearer(i),
        body: cancel,
      }),
    );
    attacker.close();
    // As many reach the route (and are refused there) as one client may send; the rest
    // never get past the limit.
    expect(countStatuses(answers)).toEqual({ 401: LIMIT, 429: 1000 - LIMIT });
    const refused = answers.find((answer) => answer.status === 429);
    expect(refused?.headers).toMatchObject({
      'ratelimit-limit': String(LIMIT),
      'ratelimit-remaining': '0',
      'content-type': expect.stringMatching(/^application\/problem\+json/) as unknown,
    });
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused?.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(Number(refused?.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(refused?.body).toMatchObject({ status: 429, code: 'rate_limited' });
    const admitted = answers.find((answer) => answer.status === 401);
    expect(admitted?.headers['ratelimit-limit']).toBe(String(LIMIT));
  });

  it('gives a verified session token a bucket of its own, shared by its producer in its session', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    const from = new LoopbackClient(base);
    const append = (token: string): Promise<Answer> =>
      from.request('POST', `/sessions/${opened.session}/events`, {
        token,
        body: cancel,
        headers: { 'idempotency-key': randomUUID() },
      });
    // The address's bucket is spent by bearers that do not verify.
    const spent = await from.many(LIMIT + 5, 8, (i) => append(randomBearer(i)));
    expect(countStatuses(spent)).toEqual({ 401: LIMIT, 429: 5 });

    // The principal's token, new to the service, still appends from that address: it is
    // identified before it is counted. Its own bucket then holds LIMIT appends.
    const own = await from.many(LIMIT + 1, 1, () => append(opened.token));
    expect(own.map((answer) => answer.status)).toEqual([...Array<number>(LIMIT).fill(200), 429]);

    // A fresh token of the same producer in the same session shares that bucket; another
    // producer of the session has its own.
    const mint = async (principal: string): Promise<string> => {
      const answer = await client.call(
        'GET',
        `/sessions/${opened.session}/token?principal=${principal}`,
        key,
      );
      expect(answer.status).toBe(200);
      return (answer.body as { token: string }).token;
    };
    expect((await append(await mint('ada'))).status).toBe(429);
    expect((await append(await mint('grace'))).status).toBe(200);
    from.close();
  });

  it("identifies a WebSocket tail's token in the access_token query or the bearer subprotocol", async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    const from = new LoopbackClient(base);
    const path = `/sessions/${opened.session}/events?from=1&to=2`;
    const spent = await from.many(LIMIT + 1, 8, (i) =>
      from.request('GET', path, { token: randomBearer(i) }),
    );
    expect(countStatuses(spent)).toEqual({ 401: LIMIT, 429: 1 });
    // A browser cannot set Authorization on an upgrade (decisions row 3).
    const upgrade = (url: string, protocols: string[] = []) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${base.replace('http', 'ws')}${url}`, protocols, {
          localAddress: from.address,
        });
        socket.once('open', () => {
          socket.close();
          resolve(101);
        });
        socket.once('unexpected-response', (_request, response) => {
          resolve(response.statusCode ?? 0);
        });
        socket.once('error', reject);
      });
    const other = await client.call(
      'GET',
      `/sessions/${opened.session}/token?principal=grace`,
      key,
    );
    expect(await upgrade(`${path}&access_token=${opened.token}`)).toBe(101);
    expect(await upgrade(path, ['bearer', (other.body as { token: string }).token])).toBe(101);
    expect(await upgrade(`${path}&access_token=${randomBearer(2)}`)).toBe(429);
    from.close();
  });

  it('gives an install key and a console user a bucket of their own', async () => {
    const { key, owner } = await client.install();
    const from = new LoopbackClient(base);
    // Bearers that do not verify spend the address's buckets of both families.
    const spend = (path: string) =>
      from.many(LIMIT + 1, 8, (i) => from.request('GET', path, { token: randomBearer(i) }));
    expect(countStatuses(await spend('/sessions'))).toEqual({ 401: LIMIT, 429: 1 });
    expect(countStatuses(await spend('/installs'))).toEqual({ 401: LIMIT, 429: 1 });

    const listed = await from.many(LIMIT + 1, 1, () =>
      from.request('GET', '/sessions', { token: key }),
    );
    expect(listed.map((answer) => answer.status)).toEqual([...Array<number>(LIMIT).fill(200), 429]);
    // The owner spent some of its bucket consenting; what is left of it says how much.
    const first = await from.request('GET', '/installs', { token: owner.token });
    expect(first.status).toBe(200);
    const left = Number(first.headers['ratelimit-remaining']);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(LIMIT);
    const installs = await from.many(left + 1, 1, () =>
      from.request('GET', '/installs', { token: owner.token }),
    );
    expect(installs.map((answer) => answer.status)).toEqual([
      ...Array<number>(left).fill(200),
      429,
    ]);
    // The user's next sign-in is the same user: the same bucket.
    const again = await client.signIn(owner);
    expect((await from.request('GET', '/installs', { token: again.token })).status).toBe(429);
    from.close();
  });
});
