/**
 * Reading `REDIS_URL`: a standalone URL goes to ioredis as it is, a
 * `redis+cluster://` one becomes seed nodes, credentials and TLS for the cluster client.
 */
import { describe, expect, it } from 'vitest';
import { parseRedisTarget } from '../../../src/storage/redis/target.ts';

describe('REDIS_URL targets', () => {
  it('hands a standalone URL on unchanged', () => {
    for (const url of ['redis://127.0.0.1:6379', 'rediss://u:p@cache.example:6380/3']) {
      expect(parseRedisTarget(url)).toEqual({ kind: 'standalone', url });
    }
  });

  it('reads the seeds of a cluster, 6379 where a node names no port', () => {
    expect(parseRedisTarget('redis+cluster://127.0.0.1:7001,cache.example,[::1]:7003')).toEqual({
      kind: 'cluster',
      seeds: [
        { host: '127.0.0.1', port: 7001 },
        { host: 'cache.example', port: 6379 },
        { host: '::1', port: 7003 },
      ],
      username: undefined,
      password: undefined,
      tls: false,
    });
  });

  it('reads percent-encoded credentials and TLS from rediss+cluster', () => {
    expect(parseRedisTarget('rediss+cluster://svc:p%40ss%3Aword@10.0.0.1:7001/')).toMatchObject({
      seeds: [{ host: '10.0.0.1', port: 7001 }],
      username: 'svc',
      password: 'p@ss:word',
      tls: true,
    });
    expect(parseRedisTarget('redis+cluster://:secret@10.0.0.1:7001')).toMatchObject({
      username: undefined,
      password: 'secret',
    });
  });

  it.each([
    ['127.0.0.1:6379', 'must be a URL'],
    ['http://127.0.0.1', 'must be a redis, rediss, redis+cluster or rediss+cluster URL'],
    ['redis+cluster://', 'must be redis+cluster://'],
    ['redis+cluster://127.0.0.1:7001/0', 'with no path'],
    ['redis+cluster://127.0.0.1:7001?tls=1', 'with no path'],
    ['redis+cluster://127.0.0.1:7001,,127.0.0.1:7002', 'names the cluster node ""'],
    ['redis+cluster://127.0.0.1:99999', 'names the cluster node "127.0.0.1:99999"'],
  ])('refuses %s', (url, reason) => {
    expect(() => parseRedisTarget(url)).toThrow(reason);
  });
});
