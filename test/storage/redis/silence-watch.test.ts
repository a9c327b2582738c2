/**
 * The connection deadline of the Redis clients (`silence-watch.ts`), on a real Redis
 * through a proxy that can go silent: commands waiting on a connection that says nothing
 * fail as `Unavailable` once the deadline has passed, and the client serves again on a new
 * connection; a connection with nothing waiting is never cut, however long it is quiet.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Unavailable } from '../../../src/errors.ts';
import { redisFailure } from '../../../src/storage/redis/failures.ts';
import { watchSilence } from '../../../src/storage/redis/silence-watch.ts';
import { eventually } from '../../support/fault-load.ts';
import { TEST_REDIS_URL } from '../../support/services.ts';
import { closedAfterEach, throughProxy } from '../../support/tcp-proxy.ts';

const LIMIT_MS = 300;

const { opened, proxyTo } = closedAfterEach();

/** A client as the log store makes it, through `url`, its closes counted. */
async function watched(url: string): Promise<{ redis: Redis; closes: () => number }> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: () => 20,
  });
  let closes = 0;
  redis.on('close', () => (closes += 1));
  redis.on('error', () => undefined);
  watchSilence(redis, LIMIT_MS);
  opened.push({
    close: () => {
      redis.disconnect();
      return Promise.resolve();
    },
  });
  await redis.connect();
  return { redis, closes: () => closes };
}

describe('watchSilence', () => {
  it('fails the commands waiting on a silent connection, then serves on a new one', async () => {
    const proxy = await proxyTo(TEST_REDIS_URL);
    const { redis, closes } = await watched(throughProxy(TEST_REDIS_URL, proxy));
    expect(await redis.ping()).toBe('PONG');

    proxy.mute();
    const started = performance.now();
    const failures = await Promise.all(
      [redis.ping(), redis.incr('silence-watch:count'), redis.ping()].map((command) =>
        command.then(
          () => null,
          (error: unknown) => redisFailure(error),
        ),
      ),
    );
    const waited = performance.now() - started;
    for (const failure of failures) expect(failure).toBeInstanceOf(Unavailable);
    expect(waited).toBeGreaterThanOrEqual(LIMIT_MS - 5);
    // The deadline plus a fifth of it between two looks, and room for a loaded machine.
    expect(waited).toBeLessThan(LIMIT_MS * 1.2 + 500);
    expect(closes()).toBe(1);

    proxy.restore();
    expect(await eventually('a new connection answers', () => redis.ping().catch(() => null))).toBe(
      'PONG',
    );
  });

  it('never cuts a connection that is quiet with nothing waiting', async () => {
    const { redis, closes } = await watched(TEST_REDIS_URL);
    expect(await redis.ping()).toBe('PONG');
    await new Promise((resolve) => setTimeout(resolve, LIMIT_MS * 3));
    expect(await redis.ping()).toBe('PONG');
    expect(closes()).toBe(0);
  });

  it('keeps a connection whose answers keep coming, however many commands wait', async () => {
    const { redis, closes } = await watched(TEST_REDIS_URL);
    const until = performance.now() + LIMIT_MS * 3;
    let answered = 0;
    // Always commands in flight, for three deadlines, each answered in turn.
    const writer = async (): Promise<void> => {
      while (performance.now() < until) {
        await redis.set('silence-watch:busy', String(answered));
        answered += 1;
      }
    };
    await Promise.all([writer(), writer(), writer()]);
    expect(answered).toBeGreaterThan(100);
    expect(closes()).toBe(0);
    await redis.del('silence-watch:busy');
  });
});
