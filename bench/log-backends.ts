/**
 * The backends `bench/log.ts` measures, each with the raw write it is compared to on the
 * same server: Redis a pipeline of plain XADDs of the same fields, PostgreSQL a plain
 * multi-row INSERT into a scratch table, SQLite the same INSERT in a transaction on a
 * file with the store's pragmas (WAL, synchronous FULL); and the raw way to tails of
 * `log-raw-tails.ts`. Every backend works under a fresh prefix, schema or folder and
 * drops it on `close`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { LogStore, PendingRecord } from '../src/storage/log-store.ts';
import { openRedisLogStore } from '../src/storage/redis/store.ts';
import { openPostgresLogStore, openSqliteLogStore } from '../src/storage/sql/open.ts';
import { postgresRawTails, redisRawTails, sqliteRawTails, type RawTails } from './log-raw-tails.ts';

export interface Backend {
  readonly name: string;
  /** A new store instance on the backend (its own connections). */
  open(): Promise<LogStore>;
  /** Writes `records` to `stream` the plain way, with nothing of the store around it. */
  raw(stream: string, records: readonly PendingRecord[]): Promise<void>;
  /** The plain way from a writer to tails, closed with the backend. */
  rawTails(): Promise<RawTails>;
  /** Whether tails run on another instance than the writer (SQLite: one process, one file). */
  readonly tailsElsewhere: boolean;
  /** Closes what it opened and drops the scratch data. */
  close(): Promise<void>;
}

const suffix = () => randomBytes(4).toString('hex');

/** The fields of a record's entry, as the Redis store writes them. */
const fields = (r: PendingRecord) =>
  ['a', Date.now(), 'n', r.kind.name, 'v', r.kind.version, 'p', r.producer].concat([
    's',
    Buffer.byteLength(r.body),
    'b',
    r.body,
  ]);

export async function redisBackend(url: string): Promise<Backend> {
  const prefix = `bench:${suffix()}:`;
  const raw = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await raw.connect();
  const stores: LogStore[] = [];
  const tails: RawTails[] = [];
  return {
    name: 'redis',
    tailsElsewhere: true,
    rawTails: async () => {
      const reader = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await reader.connect();
      const opened = redisRawTails(raw, reader, prefix, fields);
      tails.push(opened);
      return opened;
    },
    open: async () => {
      const store = await openRedisLogStore({ url, prefix });
      stores.push(store);
      return store;
    },
    raw: async (stream, records) => {
      const key = `${prefix}raw:{${stream}}`;
      // One record is one plain XADD; a batch is a pipeline of them, one round trip.
      if (records.length === 1 && records[0] !== undefined) {
        await raw.xadd(key, '*', ...fields(records[0]));
        return;
      }
      const pipeline = raw.pipeline();
      for (const r of records) pipeline.xadd(key, '*', ...fields(r));
      await pipeline.exec();
    },
    close: async () => {
      await Promise.all([...stores, ...tails].map((opened) => opened.close()));
      let cursor = '0';
      do {
        const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await raw.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await raw.quit();
    },
  };
}

const RAW_COLUMNS =
  'stream, cursor, at, kind_name, kind_version, producer, addressed_to, idem, size, body';

function rawRows(stream: string, records: readonly PendingRecord[], first: number) {
  const at = Date.now();
  return records.flatMap((r, i) => [
    stream,
    first + i,
    at,
    r.kind.name,
    r.kind.version,
    r.producer,
    r.to,
    r.idem,
    Buffer.byteLength(r.body),
    r.body,
  ]);
}

function rawInsert(rows: number, placeholder: (n: number) => string): string {
  const tuples = Array.from(
    { length: rows },
    (_, row) =>
      `(${Array.from({ length: 10 }, (_, col) => placeholder(row * 10 + col + 1)).join(', ')})`,
  );
  return `INSERT INTO raw_log (${RAW_COLUMNS}) VALUES ${tuples.join(', ')}`;
}

const RAW_TABLE = `CREATE TABLE raw_log (stream TEXT NOT NULL, cursor BIGINT NOT NULL, at BIGINT NOT NULL, kind_name TEXT NOT NULL, kind_version INTEGER NOT NULL, producer TEXT NOT NULL, addressed_to TEXT, idem TEXT, size INTEGER NOT NULL, body TEXT NOT NULL)`;

export async function postgresBackend(url: string): Promise<Backend> {
  const schema = `bench_${suffix()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`SET search_path = ${schema}`);
  await admin.query(RAW_TABLE);
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 10 });
  const stores: LogStore[] = [];
  const tails: RawTails[] = [];
  let cursor = 0;
  const insert = async (stream: string, records: readonly PendingRecord[]) => {
    const first = cursor + 1;
    cursor += records.length;
    await pool.query(
      rawInsert(records.length, (n) => `$${n}`),
      rawRows(stream, records, first),
    );
  };
  return {
    name: 'postgres',
    tailsElsewhere: true,
    rawTails: async () => {
      const opened = await postgresRawTails(url, schema, pool, (stream, record) =>
        insert(stream, [record]),
      );
      tails.push(opened);
      return opened;
    },
    open: async () => {
      const store = await openPostgresLogStore({ url, schema });
      stores.push(store);
      return store;
    },
    raw: insert,
    close: async () => {
      await Promise.all([...stores, ...tails].map((opened) => opened.close()));
      await pool.end();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

export async function sqliteBackend(): Promise<Backend> {
  const folder = await mkdtemp(path.join(tmpdir(), 'bench-log-'));
  const raw = new DatabaseSync(path.join(folder, 'raw.sqlite'));
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = FULL');
  raw.exec(RAW_TABLE);
  const statements = new Map<number, ReturnType<DatabaseSync['prepare']>>();
  const stores: LogStore[] = [];
  let cursor = 0;
  const prepared = (rows: number) => {
    let statement = statements.get(rows);
    if (statement === undefined) {
      statement = raw.prepare(rawInsert(rows, () => '?'));
      statements.set(rows, statement);
    }
    return statement;
  };
  return {
    name: 'sqlite',
    tailsElsewhere: false,
    rawTails: () =>
      Promise.resolve(
        sqliteRawTails(raw, prepared(1), (stream, record) => rawRows(stream, [record], ++cursor)),
      ),
    open: async () => {
      const store = await openSqliteLogStore({ file: path.join(folder, 'log.sqlite') });
      stores.push(store);
      return store;
    },
    raw: (stream, records) => {
      const statement = prepared(records.length);
      const first = cursor + 1;
      cursor += records.length;
      raw.exec('BEGIN IMMEDIATE');
      statement.run(...rawRows(stream, records, first));
      raw.exec('COMMIT');
      return Promise.resolve();
    },
    close: async () => {
      await Promise.all(stores.map((store) => store.close()));
      raw.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
