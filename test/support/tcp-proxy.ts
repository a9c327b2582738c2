/**
 * A TCP proxy on loopback for fault tests: the service talks to Redis or
 * PostgreSQL through it, and the test cuts the line. Nothing but `node:net`.
 *
 * - `cut()` destroys every open connection at once (both sides see a reset), as a server
 *   restart or a dropped link does, and then answers new connections by `mode`:
 *   `refuse` resets them at once (the server is down: connection refused), `hold` accepts
 *   them and forwards nothing (a black hole: the client waits for its connect timeout).
 * - `mute()` keeps every open connection but drops what the server answers on it, and
 *   holds new ones: the server runs what it is sent and the client never hears back, as
 *   when a link fails between a command and its answer.
 * - `restore()` lets connections through again; held ones still open are forwarded then,
 *   and muted ones are reset (answers were lost on them: they can never be in step again).
 *
 * The servers behind it keep running and keep their data, and other sessions sharing
 * them are never disturbed: only the connections through this proxy are cut.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach } from 'vitest';

export type CutMode = 'refuse' | 'hold';

export interface TcpProxy {
  /** `127.0.0.1:<port>`: what the service connects to instead of the target. */
  readonly host: string;
  readonly port: number;
  /** Connections forwarded so far (a restart shows as new ones). */
  readonly accepted: number;
  /** Ends every open connection, then refuses or holds new ones until `restore`. */
  cut(mode?: CutMode): void;
  /** Drops the server's answers on every open connection and holds new ones until `restore`. */
  mute(): void;
  /** Lets connections through again. */
  restore(): void;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port that forwards to `target` (`host:port`). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const held = new Set<Socket>();
  const upstreams = new Map<Socket, Socket>();
  const muted = new Set<Socket>();
  let mode: CutMode | null = null;
  let accepted = 0;

  const forward = (client: Socket): void => {
    accepted += 1;
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    upstreams.set(client, upstream);
    const end = (): void => {
      open.delete(client);
      open.delete(upstream);
      upstreams.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server: Server = createServer({ noDelay: true }, (client) => {
    if (mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'hold') {
      held.add(client);
      client.on('error', () => held.delete(client)).on('close', () => held.delete(client));
      client.pause();
      return;
    }
    forward(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');

  const resetAll = (sockets: Set<Socket>): void => {
    for (const socket of [...sockets]) {
      sockets.delete(socket);
      if (!socket.destroyed) socket.resetAndDestroy();
    }
  };

  return {
    host: '127.0.0.1',
    port: address.port,
    get accepted() {
      return accepted;
    },
    cut: (how = 'refuse') => {
      mode = how;
      resetAll(open);
    },
    mute: () => {
      mode = 'hold';
      for (const [client, upstream] of upstreams) {
        upstream.unpipe(client);
        // Flowing with no destination: what the server answers is read and dropped.
        upstream.resume();
        muted.add(client);
      }
    },
    restore: () => {
      mode = null;
      resetAll(muted);
      for (const client of [...held]) {
        held.delete(client);
        if (client.destroyed) continue;
        client.resume();
        forward(client);
      }
    },
    close: async () => {
      mode = 'refuse';
      resetAll(open);
      resetAll(held);
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

/** `url` with its host and port replaced by the proxy's (credentials, path, query kept). */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = proxy.host;
  parsed.port = String(proxy.port);
  return parsed.toString();
}

/** The `host:port` a `redis://` or `postgres://` URL names (the default port by scheme). */
export function targetOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  const fallback = parsed.protocol.startsWith('redis') ? 6379 : 5432;
  return {
    host: parsed.hostname === 'localhost' ? '127.0.0.1' : parsed.hostname,
    port: parsed.port === '' ? fallback : Number(parsed.port),
  };
}

/**
 * For a test file: proxies it starts (`proxyTo`) and whatever else it pushes on `opened`
 * (its apps) are closed after each test, last opened first, so an app ends its tails and
 * connections before the proxies under it go.
 */
export function closedAfterEach(): {
  readonly opened: { close(): Promise<void> }[];
  readonly proxyTo: (url: string) => Promise<TcpProxy>;
} {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const closable of opened.splice(0).reverse()) await closable.close();
  });
  return {
    opened,
    proxyTo: async (url) => {
      const proxy = await startTcpProxy(targetOf(url));
      opened.push(proxy);
      return proxy;
    },
  };
}
