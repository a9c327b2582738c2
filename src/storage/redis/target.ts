/**
 * What `REDIS_URL` names: a standalone server, as ioredis reads
 * `redis://` and `rediss://` URLs, or a Redis Cluster written
 * `redis+cluster://[user:password@]host:port,host:port` (`rediss+cluster://` for TLS).
 *
 * A cluster URL lists seed nodes only: the client asks them for the slot map and learns
 * every master from it, so one reachable seed is enough and the list need not follow
 * resharding. A cluster has database 0 only, so the URL takes no path, and the options
 * a query could carry have no meaning here, so it takes none either.
 */

/** One seed node of a cluster. */
export interface ClusterSeed {
  readonly host: string;
  readonly port: number;
}

export type RedisTarget =
  | { readonly kind: 'standalone'; readonly url: string }
  | {
      readonly kind: 'cluster';
      readonly seeds: readonly ClusterSeed[];
      readonly username: string | undefined;
      readonly password: string | undefined;
      readonly tls: boolean;
    };

const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/?#]*)@)?([^/?#@]+)\/?$/;

/** Reads a `REDIS_URL`; throws an `Error` whose message says what is wrong with it. */
export function parseRedisTarget(url: string): RedisTarget {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) throw new Error('must be a URL');
  if (scheme === 'redis' || scheme === 'rediss') {
    if (!URL.canParse(url)) throw new Error('must be a URL');
    return { kind: 'standalone', url };
  }
  if (scheme !== 'redis+cluster' && scheme !== 'rediss+cluster') {
    throw new Error('must be a redis, rediss, redis+cluster or rediss+cluster URL');
  }
  const match = CLUSTER_URL.exec(url);
  const nodes = match?.[3];
  if (match === null || nodes === undefined) {
    throw new Error('must be redis+cluster://[user:password@]host:port,host:port with no path');
  }
  const [username, password] = credentials(match[2]);
  return {
    kind: 'cluster',
    seeds: nodes.split(',').map(seed),
    username,
    password,
    tls: scheme === 'rediss+cluster',
  };
}

/** `user:password`, or `:password` for the `default` user, as in a `redis://` URL. */
function credentials(userinfo: string | undefined): [string | undefined, string | undefined] {
  if (userinfo === undefined || userinfo === '') return [undefined, undefined];
  const colon = userinfo.indexOf(':');
  const decode = (text: string) => (text === '' ? undefined : decodeURIComponent(text));
  return colon < 0
    ? [decode(userinfo), undefined]
    : [decode(userinfo.slice(0, colon)), decode(userinfo.slice(colon + 1))];
}

/** One `host:port` of the list; `[::1]:7001` for IPv6; the port defaults to 6379. */
function seed(text: string): ClusterSeed {
  const parsed = URL.canParse(`redis://${text}`) ? new URL(`redis://${text}`) : undefined;
  if (parsed === undefined || parsed.hostname === '' || parsed.username !== '') {
    throw new Error(`names the cluster node ${JSON.stringify(text)}, which is not host:port`);
  }
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
  };
}
