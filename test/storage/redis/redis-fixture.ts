/**
 * Redis log stores for the suites: every suite gets its own random key prefix on the
 * real server, so suites and test runs never see each other's keys, and drops its keys
 * when it ends.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { LogStore } from '../../../src/storage/log-store.ts';
import { openRedisLogStore, type RedisLogStoreOptions } from '../../../src/storage/redis/store.ts';
import { TEST_REDIS_URL, unreachable } from '../../support/services.ts';

export interface RedisFixture {
  readonly prefix: string;
  /** A connection of the suite's own, for looking at keys and clients. */
  readonly admin: Redis;
  /** A new store instance on the suite's prefix; closed by `cleanup`. */
  open(options?: Partial<RedisLogStoreOptions>): Promise<LogStore>;
  /** The suite's keys, as SCAN finds them. */
  keys(): Promise<string[]>;
  /** Closes every store it opened and deletes every key under the prefix. */
  cleanup(): Promise<void>;
}

export async function redisFixture(): Promise<RedisFixture> {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const admin = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await admin.connect();
  } catch (error) {
    admin.disconnect();
    throw unreachable('Redis', TEST_REDIS_URL, error);
  }
  const opened: LogStore[] = [];
  const keys = async (): Promise<string[]> => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found;
  };
  return {
    prefix,
    admin,
    open: async (options = {}) => {
      const store = await openRedisLogStore({ url: TEST_REDIS_URL, prefix, ...options });
      opened.push(store);
      return store;
    },
    keys,
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      const found = await keys();
      for (let i = 0; i < found.length; i += 500) await admin.del(...found.slice(i, i + 500));
      await admin.quit();
    },
  };
}
