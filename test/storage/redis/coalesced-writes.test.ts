/**
 * The command connection's coalesced writes (`coalesced-writes.ts`), on a real Redis: the
 * commands issued in one round of the event loop wait in the corked socket until the
 * round ends and then leave together; once they hold `FLUSH_BYTES` they are written at
 * once; either way every command is answered from its own reply, in the order issued.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalesceWrites, FLUSH_BYTES } from '../../../src/storage/redis/coalesced-writes.ts';
import { TEST_REDIS_URL } from '../../support/services.ts';

const prefix = `test:${randomBytes(6).toString('hex')}:`;
let redis: Redis;

/** The client's socket: what its commands are written to. */
const socket = (): Socket => redis.stream;

/** One turn of the event loop, past its check phase. */
const nextRound = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
  coalesceWrites(redis);
  coalesceWrites(redis); // idempotent: one cork per round, not two
  await redis.connect();
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('coalesceWrites', () => {
  it("holds a round's small commands until the round ends, then answers each in order", async () => {
    await nextRound();
    const answers = [
      redis.set(`${prefix}a`, '1'),
      redis.incr(`${prefix}a`),
      redis.get(`${prefix}a`),
    ];
    expect(socket().writableCorked).toBe(1);
    expect(socket().writableLength).toBeGreaterThan(0);
    await nextRound();
    expect(socket().writableCorked).toBe(0);
    expect(await Promise.all(answers)).toEqual(['OK', 2, '2']);
  });

  it('writes at once once the commands of a round hold FLUSH_BYTES, and corks again after', async () => {
    await nextRound();
    const big = 'x'.repeat(FLUSH_BYTES);
    const first = redis.set(`${prefix}small`, 'before');
    expect(socket().writableCorked).toBe(1);
    const large = redis.set(`${prefix}big`, big);
    // Handed to the system within the round: the socket is no longer corked.
    expect(socket().writableCorked).toBe(0);
    const after = redis.get(`${prefix}small`);
    expect(socket().writableCorked).toBe(1);
    expect(await Promise.all([first, large, after])).toEqual(['OK', 'OK', 'before']);
    expect(socket().writableCorked).toBe(0);
    expect(await redis.strlen(`${prefix}big`)).toBe(FLUSH_BYTES);
  });

  it('keeps the order of commands across a write made before the round ended', async () => {
    await nextRound();
    const key = `${prefix}list`;
    const pushes = [
      redis.rpush(key, 'one'),
      redis.rpush(key, 'x'.repeat(FLUSH_BYTES * 2)),
      redis.rpush(key, 'three'),
      redis.rpush(key, 'four'),
    ];
    expect(await Promise.all(pushes)).toEqual([1, 2, 3, 4]);
    const items = await redis.lrange(key, 0, -1);
    expect(items.map((item) => (item.length > 10 ? 'big' : item))).toEqual([
      'one',
      'big',
      'three',
      'four',
    ]);
  });
});
