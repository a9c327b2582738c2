/**
 * The connections of a Redis log store, made from what `REDIS_URL` names (`target.ts`):
 * the command client every append, read and head goes through, and the connections its
 * fan-out holds beside it (`stream-reader.ts` on a standalone server, `cluster-reader.ts`
 * on a cluster).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from './target.ts';

type ClusterTarget = Extract<RedisTarget, { kind: 'cluster' }>;

/** The command client, and what its kind of server needs beside it. */
export type LogConnection =
  | { readonly kind: 'standalone'; readonly client: Redis }
  | { readonly kind: 'cluster'; readonly client: Cluster; readonly target: ClusterTarget };

/**
 * Redirections a cluster command may follow before it fails. TRYAGAIN counts as one and
 * comes back every 100 ms while a slot migrates and a script names a key the slot does
 * not hold yet (a new session, or one without idempotency keys): 64 lets an append wait
 * out a migration of about six seconds instead of failing after 1.6 (ioredis's 16).
 */
const MAX_REDIRECTIONS = 64;

/**
 * The command client of `target`, not yet connected (`connect()` it). Commands issued in
 * the same tick go out in one write (auto-pipelining): with many sessions at work, the
 * appends, reads and head checks of one tick cost one system call instead of one each,
 * and on this kind of machine the write call was the largest single cost of a turn's
 * Redis traffic (`npm run bench:turns` under `--cpu-prof`). Order per connection is kept.
 */
export function commandClient(target: RedisTarget, name: string): LogConnection {
  const connectionName = `${name}:command`;
  if (target.kind === 'standalone') {
    return {
      kind: 'standalone',
      client: new Redis(target.url, {
        lazyConnect: true,
        connectionName,
        enableAutoPipelining: true,
      }),
    };
  }
  const client = new Cluster(
    target.seeds.map(({ host, port }) => ({ host, port })),
    {
      lazyConnect: true,
      enableAutoPipelining: true,
      maxRedirections: MAX_REDIRECTIONS,
      redisOptions: { ...nodeOptions(target), connectionName },
    },
  );
  return { kind: 'cluster', client, target };
}

/**
 * The standalone reader's blocking connection. It does not reconnect by itself: the
 * reader makes a new one (see `StreamReader`'s `#connection`).
 */
export function blockingConnection(command: Redis, name: string): Redis {
  return command.duplicate({
    connectionName: `${name}:reader`,
    lazyConnect: false,
    retryStrategy: () => null,
  });
}

/**
 * Opens the cluster reader's subscriber connection to one master. It neither reconnects
 * nor resubscribes by itself: the reader follows its streams anew when it ends, and
 * reads after each subscription, which ioredis's silent resubscription would skip.
 */
export function subscriberConnection(target: ClusterTarget, name: string) {
  return (host: string, port: number): Redis =>
    new Redis({
      ...nodeOptions(target),
      host,
      port,
      connectionName: `${name}:reader`,
      retryStrategy: () => null,
      autoResubscribe: false,
    });
}

/** What every connection to a node of the cluster needs: credentials and TLS. */
function nodeOptions(target: ClusterTarget): RedisOptions {
  return {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.tls ? { tls: {} } : {}),
  };
}
