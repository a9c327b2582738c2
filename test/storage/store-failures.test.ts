/**
 * Which store failures are "the store does not answer", on real errors
 * of real clients: a refused connection and a silent one become the one `Unavailable`
 * (503 with `Retry-After`); an answer the server gave, such as a syntax error, stays what
 * it is, so a bug is never passed off as an outage.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { Unavailable } from '../../src/errors.ts';
import { toServiceError } from '../../src/http/error-handler.ts';
import { isRedisUnavailable, redisFailure } from '../../src/storage/redis/failures.ts';
import { openPostgresDriver } from '../../src/storage/sql/postgres-driver.ts';
import { freePort } from '../support/service-process.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import { startTcpProxy, targetOf, throughProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('Redis failures', () => {
  it('reads a command on a connection that is down as unavailable, 503 with Retry-After', async () => {
    const redis = new Redis({
      port: await freePort(),
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    closing.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    const error = await rejection(redis.get('x'));
    expect(isRedisUnavailable(error)).toBe(true);
    const mapped = toServiceError(error);
    expect(mapped.status).toBe(503);
    expect(mapped.headers?.['retry-after']).toBe('1');
  });

  it('reads a command the server never answers as unavailable once it times out', async () => {
    const proxy: TcpProxy = await startTcpProxy(targetOf(TEST_REDIS_URL));
    closing.push(() => proxy.close());
    const redis = new Redis(throughProxy(TEST_REDIS_URL, proxy), { commandTimeout: 300 });
    closing.push(() => {
      redis.disconnect();
      return Promise.resolve();
    });
    await redis.ping();
    proxy.mute();
    const error = await rejection(redis.ping());
    expect(redisFailure(error)).toBeInstanceOf(Unavailable);
  });

  it('leaves an error the server answered as it is', async () => {
    const redis = new Redis(TEST_REDIS_URL);
    closing.push(() => redis.quit());
    const error = await rejection(redis.call('NO.SUCH.COMMAND'));
    expect(isRedisUnavailable(error)).toBe(false);
    expect(redisFailure(error)).toBe(error);
    expect(toServiceError(error).status).toBe(500);
  });
});

describe('PostgreSQL failures', () => {
  it('answers a query on a server that refuses connections with Unavailable', async () => {
    const driver = openPostgresDriver({
      url: `postgres://postgres@127.0.0.1:${String(await freePort())}/test`,
    });
    closing.push(() => driver.close());
    const error = await rejection(driver.query('SELECT 1'));
    expect(error).toBeInstanceOf(Unavailable);
    expect((error as Unavailable).headers?.['retry-after']).toBe('1');
  });

  it('answers a query whose answer never comes with Unavailable after the statement timeout', async () => {
    const proxy = await startTcpProxy(targetOf(TEST_DATABASE_URL));
    closing.push(() => proxy.close());
    const driver = openPostgresDriver({ url: throughProxy(TEST_DATABASE_URL, proxy) });
    closing.push(() => driver.close());
    await driver.query('SELECT 1');
    proxy.mute();
    const started = Date.now();
    const error = await rejection(driver.transaction((tx) => tx.query('SELECT 1')));
    expect(error).toBeInstanceOf(Unavailable);
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it('leaves an error the server answered as it is', async () => {
    const driver = openPostgresDriver({ url: TEST_DATABASE_URL });
    closing.push(() => driver.close());
    const error = await rejection(driver.query('SELEC 1'));
    expect(error).not.toBeInstanceOf(Unavailable);
    expect(toServiceError(error).status).toBe(500);
  });
});
