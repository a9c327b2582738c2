/**
 * The log store on Redis Streams (interface 2.2 to 2.4, 3.1): one Redis
 * stream per session, every append and archive one Lua script (`scripts/*.lua`) that
 * also publishes the new head on the session's wake channel, tails served by one shared
 * reader per instance that subscribes to those channels, one connection per master
 * (`wake-reader.ts`; a standalone server is one master). Key layout, hash tags and the
 * cursor-to-id mapping are in `keys.ts`; `REDIS_URL`'s forms in `target.ts`. The wakes
 * are sharded Pub/Sub (SPUBLISH), so the server must be Redis 7 or later (or Valkey).
 *
 * Durability. Redis acknowledges a script once it ran in memory. For an acknowledged
 * record to survive a Redis restart the deployment must run with the append-only file:
 * `appendonly yes` with `appendfsync always` (every write is on disk before the reply),
 * or `appendfsync everysec`, which loses at most the last second of acknowledged records
 * on a power loss or kernel crash (a crash of the Redis process alone loses nothing). RDB
 * snapshots alone lose everything since the last snapshot. A replica does not change
 * this: replication is asynchronous (WAIT only narrows the window). The test server here
 * runs with `--save "" --appendonly no`: fine for tests, not for keeping sessions.
 */
import type { Clock } from '../../clock.ts';
import { Unavailable } from '../../errors.ts';
import type {
  AppendBatch,
  AppendResult,
  LogStore,
  PendingRecord,
  ReadRange,
  StoredRecord,
  StreamHead,
  TailOptions,
} from '../log-store.ts';
import { refusalError } from '../outcomes.ts';
import { landed, parseEntries, type LogEntry } from './entries.ts';
import { commandClient, readerTopology, type LogConnection } from './client.ts';
import { redisFailure } from './failures.ts';
import { checkPrefix, sessionKeys, type SessionKeys } from './keys.ts';
import { defineLogScripts, runAppend, runArchive, type LogClient } from './scripts.ts';
import type { LogFeed } from './feed.ts';
import { WakeReader } from './wake-reader.ts';
import { parseRedisTarget } from './target.ts';
import type { Subscription } from '../subscription.ts';
import { redisTail, type TailSource } from './tail.ts';

export interface RedisLogStoreOptions {
  /**
   * `REDIS_URL`: `redis://` or `rediss://` for a standalone server,
   * `redis+cluster://host:port,host:port` or `rediss+cluster://…` for a cluster.
   */
  readonly url: string;
  /** Prefix of every key (no braces); `log:` by default. Tests use a random one. */
  readonly prefix?: string;
  /** Stamps `at`; absent, `at` is Redis TIME read inside the append script (row 13). */
  readonly clock?: Clock;
  /** Connection name prefix, as CLIENT LIST shows it: `<name>:command`, `<name>:reader`. */
  readonly name?: string;
  /** Records a tail may have buffered before it falls back to XRANGE; 1024 by default. */
  readonly tailBuffer?: number;
  /** Hears failures the store retries by itself (the reader's reads); ignored by default. */
  readonly onError?: (error: unknown) => void;
}

/** How long `ping` waits for an answer. */
const PING_TIMEOUT_MS = 2_000;

/** A log store on Redis, with the command client it runs on. */
export interface RedisLogStore extends LogStore {
  /** The command client (a round's commands in one write); the rate limits count on a duplicate. */
  readonly client: LogClient;
}

/** Opens a Redis log store; rejects when the server does not answer. */
export async function openRedisLogStore(options: RedisLogStoreOptions): Promise<RedisLogStore> {
  const name = options.name ?? 'logstore';
  const prefix = checkPrefix(options.prefix ?? 'log:');
  const connection = commandClient(parseRedisTarget(options.url), name);
  const redis = connection.client;
  redis.on('error', options.onError ?? ignore);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Unavailable('store_unavailable', `redis does not answer: ${message(error)}`, {
      cause: error,
    });
  }
  defineLogScripts(redis);
  return new RedisStreamsLogStore(connection, { ...options, name, prefix });
}

class RedisStreamsLogStore implements RedisLogStore, TailSource {
  readonly backend = 'redis';
  readonly #redis: LogClient;
  readonly #prefix: string;
  readonly #clock: Clock | undefined;
  readonly #reader: LogFeed;
  readonly #tail: ReturnType<typeof redisTail>;
  #closed = false;
  readonly #closing = new AbortController();

  constructor(
    connection: LogConnection,
    options: RedisLogStoreOptions & { readonly name: string; readonly prefix: string },
  ) {
    this.#redis = connection.client;
    this.#prefix = options.prefix;
    this.#clock = options.clock;
    const capacity = options.tailBuffer ?? 1024;
    const onError = options.onError ?? ignore;
    const keys = (stream: string) => this.#keys(stream);
    this.#reader = new WakeReader({
      topology: readerTopology(connection, options.name),
      keys,
      capacity,
      onError,
    });
    this.#tail = redisTail(this);
  }

  get client(): LogClient {
    return this.#redis;
  }

  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  async append(batch: AppendBatch): Promise<AppendResult> {
    let outcome;
    try {
      outcome = await runAppend(this.#redis, this.#keys(batch.stream), batch, this.#clock?.now());
    } catch (error) {
      throw redisFailure(error);
    }
    switch (outcome.code) {
      case 'landed': {
        const stored = batch.records.map((record, i) =>
          landed(batch.stream, record, outcome.cursor + i, outcome.at),
        );
        // Tails of this process get them now, not once the reader reads them back.
        this.#reader.published(
          batch.stream,
          stored.map((record) => ({ record, final: false })),
        );
        return { outcome: 'landed', records: stored };
      }
      case 'replayed':
        return { outcome: 'replayed', records: records(batch.stream, outcome.entries) };
      case 'refused':
        throw refusalError(outcome.refusal);
    }
  }

  async archive(stream: string, record: PendingRecord): Promise<StoredRecord> {
    const keys = this.#keys(stream);
    const outcome = await runArchive(this.#redis, keys, record, this.#clock?.now()).catch(rethrow);
    switch (outcome.code) {
      case 'landed': {
        const final = landed(stream, record, outcome.cursor, outcome.at);
        this.#reader.published(stream, [{ record: final, final: true }]);
        return final;
      }
      case 'replayed': {
        const [final] = records(stream, outcome.entries);
        if (final === undefined) throw new Error(`archived stream ${stream} has no final record`);
        return final;
      }
      case 'refused':
        throw refusalError(outcome.refusal);
    }
  }

  async read(stream: string, range: ReadRange): Promise<StoredRecord[]> {
    const entries = await this.range(
      stream,
      range.from,
      range.to ?? Number.POSITIVE_INFINITY,
      range.limit ?? Number.POSITIVE_INFINITY,
    );
    return entries.map((entry) => entry.record);
  }

  tail(stream: string, options: TailOptions): AsyncIterable<StoredRecord> {
    return this.#tail(stream, options);
  }

  async head(stream: string): Promise<StreamHead | null> {
    const [head, archived] = await this.#redis
      .hmget(this.#keys(stream).meta, 'head', 'archived')
      .catch(rethrow);
    return head === null ? null : { head: Number(head), archived: archived === '1' };
  }

  async readByKey(stream: string, key: string): Promise<StoredRecord[] | null> {
    const keys = this.#keys(stream);
    const held = await this.#redis.hget(keys.keys, key).catch(rethrow);
    const match = held === null ? null : /^(\d+):(\d+):/.exec(held);
    if (match === null) return null;
    const entries = await this.#redis
      .xrange(keys.log, match[1] ?? '', match[2] ?? '')
      .catch(rethrow);
    return records(stream, entries);
  }

  async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`));
      }, PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.#redis.ping(), timeout]);
    } catch (error) {
      throw new Unavailable('store_unavailable', `redis does not answer: ${message(error)}`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    await this.#reader.close();
    await this.#redis.quit().catch(ignore);
  }

  /** Entries from `from` (inclusive; 0 reads from 1) to `to` (exclusive), at most `limit`. */
  async range(stream: string, from: number, to: number, limit: number): Promise<LogEntry[]> {
    const start = Math.max(from, 1);
    if (to <= start || limit <= 0) return [];
    const key = this.#keys(stream).log;
    const end = Number.isFinite(to) ? String(to - 1) : '+';
    const entries = await (
      Number.isFinite(limit)
        ? this.#redis.xrange(key, start, end, 'COUNT', limit)
        : this.#redis.xrange(key, start, end)
    ).catch(rethrow);
    return parseEntries(stream, entries);
  }

  subscribe(stream: string, seen: number): Subscription {
    return this.#reader.subscribe(stream, seen);
  }

  unsubscribe(subscription: Subscription): void {
    this.#reader.unsubscribe(subscription);
  }

  #keys(stream: string): SessionKeys {
    return sessionKeys(this.#prefix, stream);
  }
}

function records(stream: string, entries: Parameters<typeof parseEntries>[1]): StoredRecord[] {
  return parseEntries(stream, entries).map((entry) => entry.record);
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Rethrows a command's failure as the caller should see it (`failures.ts`). */
function rethrow(error: unknown): never {
  throw redisFailure(error);
}

function ignore(): void {
  // Failures the store retries need no listener, but ioredis wants one.
}
