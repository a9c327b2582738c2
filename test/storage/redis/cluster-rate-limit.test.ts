/**
 * Rate limits counted on a Redis Cluster: with `REDIS_URL` naming a
 * cluster the limits count through the log store's cluster client, each bucket one key on
 * the master of its slot, and two service instances on the cluster share one limit.
 */
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRedisTarget } from '../../../src/storage/redis/target.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { countStatuses, LoopbackClient } from '../../http/loopback-client.ts';
import { clusterUrl } from './cluster-fixture.ts';

const LIMIT = 20;

describe('rate limits on a Redis Cluster', () => {
  const apps: TestApp[] = [];
  const bases: string[] = [];
  let admin: Cluster;

  beforeAll(async () => {
    const url = clusterUrl();
    for (let i = 0; i < 2; i += 1) {
      const harness = await startTestApp({
        redisUrl: url,
        rateLimits: { appends: { max: LIMIT, windowMs: 60_000 } },
      });
      apps.push(harness);
      bases.push(await harness.app.listen({ port: 0, host: '127.0.0.1' }));
    }
    const target = parseRedisTarget(url);
    if (target.kind !== 'cluster') throw new Error(`${url} names no cluster`);
    admin = new Cluster([...target.seeds]);
  });
  afterAll(async () => {
    await admin.quit();
    await Promise.all(apps.map((harness) => harness.close()));
  });

  it('lets two instances on the cluster allow one limit between them, per address', async () => {
    // One address, every other request to each instance.
    const first = new LoopbackClient(bases[0] ?? '');
    const second = new LoopbackClient(bases[1] ?? '', first.address);
    const session = randomBytes(36).toString('hex');
    const answers = await first.many(200, 16, (i) =>
      (i % 2 === 0 ? first : second).request('POST', `/sessions/${session}/events`, {
        token: randomBytes(24).toString('base64url'),
        body: [{ kind: { name: 'turn.cancel', version: 1 }, body: { turn: null } }],
      }),
    );
    first.close();
    second.close();
    expect(countStatuses(answers)).toEqual({ 401: LIMIT, 429: 200 - LIMIT });
    // The bucket is one key of the cluster. A limit of 20 is taken one count at a time
    // (`rate-leases.ts`): the instance that took the window's last count refused the rest
    // itself, the other went once more to find the window spent, then did the same.
    const key = `ratelimit:http://127.0.0.1:appends:ip:${first.address}`;
    expect(await admin.get(key)).toBe(String(LIMIT + 1));
    expect(await admin.pttl(key)).toBeGreaterThan(0);
  });
});
