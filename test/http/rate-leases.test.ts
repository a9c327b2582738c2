/**
 * The rate limit's Redis store (`src/http/rate-leases.ts`) on real Redis: counts taken a
 * few at a time and handed out one per request, exact with one process, never more than
 * the limit in a window however many processes share it, one take in flight per bucket,
 * a spent window refused without Redis, a failed take failing only its own requests.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leasedCounts, leaseSize } from '../../src/http/rate-leases.ts';
import { TEST_REDIS_URL } from '../support/services.ts';

let redis: Redis;
const prefix = `rate-leases:${randomUUID()}:`;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  await redis.connect();
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

interface Counted {
  readonly current: number;
  readonly ttl: number;
}

type Store = InstanceType<ReturnType<typeof leasedCounts>>;

/** A store as the plugin makes one (`new Store(options)`), on `client`. */
function store(client: Redis = redis): Store {
  const Store = leasedCounts(client, prefix);
  return new Store({});
}

function count(on: Store, key: string, windowMs: number, max: number): Promise<Counted> {
  return new Promise((resolve, reject) => {
    on.incr(
      key,
      (error, result) => {
        if (error !== null) reject(error);
        else if (result === undefined) reject(new Error('no result'));
        else resolve(result);
      },
      windowMs,
      max,
    );
  });
}

const MINUTE = 60_000;

describe('leased rate counts', () => {
  it('takes a twentieth of the limit at once, at most 50, at least 1', () => {
    expect([1, 19, 39, 40, 100, 1000, 10_000_000].map(leaseSize)).toEqual([1, 1, 1, 2, 5, 50, 50]);
  });

  it('counts one process exactly, refusing past the limit without going to Redis', async () => {
    const key = `appends:${randomUUID()}`;
    const one = store();
    const first = await count(one, key, MINUTE, 100);
    expect(first.current).toBe(1);
    expect(first.ttl).toBeGreaterThan(MINUTE - 5_000);
    // The first request took five counts from the window.
    expect(await redis.get(prefix + key)).toBe('5');
    const rest: number[] = [];
    for (let i = 0; i < 104; i += 1) rest.push((await count(one, key, MINUTE, 100)).current);
    expect(rest.slice(0, 99)).toEqual(Array.from({ length: 99 }, (_, i) => i + 2));
    // Past the limit: refused (current over max), and nothing more taken from Redis.
    expect(rest.slice(99).every((current) => current > 100)).toBe(true);
    expect(await redis.get(prefix + key)).toBe('100');
  });

  it('has one take in flight per bucket, however many requests come at once', async () => {
    const key = `tails:${randomUUID()}`;
    const one = store();
    const counted = await Promise.all(
      Array.from({ length: 40 }, () => count(one, key, MINUTE, 1_000)),
    );
    expect(counted.map(({ current }) => current)).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    expect(await redis.get(prefix + key)).toBe('50');
  });

  it('never lets more than the limit through a window, however the processes take turns', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 160 }),
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 220 }),
        async (max, turns) => {
          const key = `sessions:${randomUUID()}`;
          const processes = [store(), store(), store()];
          const allowed: number[] = [];
          for (const turn of turns) {
            const on = processes[turn];
            if (on === undefined) throw new Error('no process');
            const { current } = await count(on, key, MINUTE, max);
            if (current <= max) allowed.push(current);
          }
          // Every count handed out is the window's own, once, and within the limit.
          expect(new Set(allowed).size).toBe(allowed.length);
          expect(allowed.length).toBeLessThanOrEqual(max);
          // What the other processes may hold unused is all that is refused early.
          const used = new Set(turns).size;
          const early = (used - 1) * (leaseSize(max) - 1);
          expect(allowed.length).toBeGreaterThanOrEqual(Math.min(turns.length, max - early));
          if (used === 1) expect(allowed.length).toBe(Math.min(turns.length, max));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('opens a new window once its window ends', async () => {
    const key = `open:${randomUUID()}`;
    const one = store();
    for (let i = 1; i <= 3; i += 1) expect((await count(one, key, 150, 3)).current).toBe(i);
    expect((await count(one, key, 150, 3)).current).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await count(one, key, 150, 3)).current).toBe(1);
  });

  it('fails the requests of a take Redis did not answer, and takes again for the next', async () => {
    const down = new Redis({
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    down.on('error', () => undefined);
    const key = `console:${randomUUID()}`;
    const failing = store(down);
    const answers = await Promise.allSettled([
      count(failing, key, MINUTE, 100),
      count(failing, key, MINUTE, 100),
    ]);
    expect(answers.map(({ status }) => status)).toEqual(['rejected', 'rejected']);
    await expect(count(failing, key, MINUTE, 100)).rejects.toThrow();
    down.disconnect();
  });
});
