/**
 * Redis Cluster log stores for the suites: as `redis-fixture.ts`, a
 * random key prefix per suite whose keys are dropped at its end, on the local 3-master
 * cluster `.ci/run` starts and names in `TEST_REDIS_CLUSTER_URL`
 * (`redis+cluster://127.0.0.1:7001,…`). Without that variable the suites fail, naming
 * it: a cluster run that silently skipped would pass without testing anything.
 */
import { randomBytes } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import type { LogStore } from '../../../src/storage/log-store.ts';
import { openRedisLogStore, type RedisLogStoreOptions } from '../../../src/storage/redis/store.ts';
import { parseRedisTarget } from '../../../src/storage/redis/target.ts';
import { unreachable } from '../../support/services.ts';

export interface ClusterFixture {
  /** The `redis+cluster://` URL the stores open. */
  readonly url: string;
  readonly prefix: string;
  /** A cluster client of the suite's own, for looking at keys, slots and nodes. */
  readonly admin: Cluster;
  /** A new store instance on the suite's prefix; closed by `cleanup`. */
  open(options?: Partial<RedisLogStoreOptions>): Promise<LogStore>;
  /** The suite's keys on every master, as SCAN finds them. */
  keys(): Promise<string[]>;
  /** Closes every store it opened and deletes every key under the prefix. */
  cleanup(): Promise<void>;
}

/** The cluster's URL; throws when `.ci/run` (or the developer) did not name one. */
export function clusterUrl(): string {
  const url = process.env.TEST_REDIS_CLUSTER_URL;
  if (url === undefined || url === '') {
    throw new Error(
      'TEST_REDIS_CLUSTER_URL is not set: the Redis Cluster suites need a cluster. ' +
        'bash .ci/run starts a local 3-master one and sets it ' +
        '(or set it to redis+cluster://host:port,host:port yourself)',
    );
  }
  return url;
}

export async function clusterFixture(): Promise<ClusterFixture> {
  const url = clusterUrl();
  const target = parseRedisTarget(url);
  if (target.kind !== 'cluster') throw new Error(`TEST_REDIS_CLUSTER_URL=${url} names no cluster`);
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const admin = new Cluster([...target.seeds], { lazyConnect: true });
  try {
    await admin.connect();
  } catch (error) {
    admin.disconnect();
    throw unreachable('Redis Cluster', url, error);
  }
  const opened: LogStore[] = [];
  const keys = async (): Promise<string[]> => {
    const found = await Promise.all(admin.nodes('master').map((node) => scan(node, prefix)));
    return found.flat();
  };
  return {
    url,
    prefix,
    admin,
    open: async (options = {}) => {
      const store = await openRedisLogStore({ url, prefix, ...options });
      opened.push(store);
      return store;
    },
    keys,
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      // One key per command: keys of several slots cannot share one on a cluster.
      await Promise.all((await keys()).map((key) => admin.unlink(key)));
      await admin.quit();
    },
  };
}

async function scan(node: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found;
}
