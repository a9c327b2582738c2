/**
 * The PostgreSQL driver: a `pg` pool behind the `SqlDriver` seam.
 *
 * Statements keep the `?` placeholders the stores write and are numbered (`$1`, `$2`, …)
 * here. Transactions run at READ COMMITTED with explicit row locks (`FOR UPDATE`, or the
 * lock an UPDATE or ON CONFLICT takes), which is what lets two processes race on one
 * stream or resource and have exactly one win. A deadlock or serialization failure
 * between such transactions is retried: the work given to `transaction` only touches
 * the database.
 */
import pg from 'pg';
import { Unavailable } from '../../errors.ts';
import { isSocketError } from '../socket-errors.ts';
import type { SqlDialect, SqlDriver, SqlQueryable, SqlRow, SqlValue } from './driver.ts';

export interface PostgresOptions {
  /** `postgres://user@host:port/database`. */
  readonly url: string;
  /**
   * The schema the tables live in, through `search_path` (absent: the server's default,
   * usually `public`). Tests give each file its own so parallel runs never meet.
   */
  readonly schema?: string;
  /** Pool size (default 10). */
  readonly max?: number;
}

const dialect: SqlDialect = { name: 'postgres', lockRows: ' FOR UPDATE' };
/**
 * How long a new connection may take before the attempt fails: without
 * it a server that accepts nothing (a link gone silent) holds every request that needs a
 * connection, and the pool's queue, for as long as the kernel keeps trying.
 */
export const CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long a statement may go unanswered before it fails and its connection is dropped
 * (a link gone silent mid-query; `pg` would otherwise wait for as long as TCP does).
 * Migrations run without it (`TransactionOptions.unbounded`).
 */
export const QUERY_TIMEOUT_MS = 5_000;
/** SQLSTATEs worth a retry: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 5;

/** `?` to `$n`. The stores never put a `?` inside a string literal. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** The connection settings of every client the stores open, pool and listener alike. */
export function clientConfig(options: PostgresOptions): pg.ClientConfig {
  const { schema } = options;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError(`schema ${schema} is not a plain lower-case identifier`);
  }
  return {
    connectionString: options.url,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    application_name: 'agent-session-service',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A connection whose server vanished without a word is found out and dropped.
    keepAlive: true,
  };
}

/**
 * Messages `pg` gives the errors it makes when a connection is lost, refused or timed out,
 * or the pool is closing: none carries a code of its own.
 */
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'Query read timeout',
];

/**
 * SQLSTATEs of a server that cannot serve now: class 08 (connection exception), 53300
 * too_many_connections, 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up or shutting down).
 */
const UNAVAILABLE_STATES = /^(08...|53300|57P0[123])$/;

/**
 * True for an error `pg` makes or a server state PostgreSQL answers when it cannot serve:
 * known by itself, wherever it is caught (the error handler's safety net reads it too).
 */
export function isPostgresUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof pg.DatabaseError) {
    return error.code !== undefined && UNAVAILABLE_STATES.test(error.code);
  }
  return CONNECTION_MESSAGES.some((prefix) => error.message.startsWith(prefix));
}

/** `error` of a query as the caller should see it: `Unavailable` when the server is out of reach. */
function unavailable(error: unknown): unknown {
  if (!isPostgresUnavailable(error) && !isSocketError(error)) return error;
  return new Unavailable(
    'store_unavailable',
    `PostgreSQL does not answer (${(error as Error).message})`,
    { cause: error },
  );
}

function retryable(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code !== undefined && RETRYABLE.has(error.code);
}

/** A statement as `pg` takes it, with `pg`'s per-query read timeout when `timeoutMs` is set. */
function statement(
  text: string,
  params: readonly SqlValue[] | undefined,
  timeoutMs: number | undefined,
): pg.QueryConfig & { readonly query_timeout?: number } {
  return {
    text,
    // No values: the simple protocol, which runs a script of several statements.
    ...(params === undefined ? {} : { values: [...params] }),
    ...(timeoutMs === undefined ? {} : { query_timeout: timeoutMs }),
  };
}

async function rows(
  client: pg.Pool | pg.PoolClient,
  sql: string,
  params: readonly SqlValue[],
  timeoutMs: number | undefined,
): Promise<SqlRow[]> {
  const result = await client.query<SqlRow>(statement(numbered(sql), params, timeoutMs));
  return result.rows;
}

/** Opens the pool; connections are made on first use. */
export function openPostgresDriver(options: PostgresOptions): SqlDriver {
  const pool = new pg.Pool({ ...clientConfig(options), max: options.max ?? 10 });
  // An idle client whose server went away: the pool drops it and the next query
  // connects afresh; without a listener the error would end the process.
  pool.on('error', () => undefined);
  let closing: Promise<void> | undefined;

  const transactionOnce = async <T>(
    work: (tx: SqlQueryable) => Promise<T>,
    timeoutMs: number | undefined,
  ): Promise<T> => {
    const client = await pool.connect().catch((error: unknown) => {
      throw unavailable(error);
    });
    let open = true;
    const live = (): void => {
      if (!open) throw new Error('query on a finished transaction');
    };
    const run = async (sql: string): Promise<void> => {
      await client.query(statement(sql, undefined, timeoutMs));
    };
    const tx: SqlQueryable = {
      query: async (sql, params = []) => {
        live();
        return rows(client, sql, params, timeoutMs);
      },
      exec: async (sql) => {
        live();
        await run(sql);
      },
    };
    let broken = false;
    try {
      await run('BEGIN');
      const result = await work(tx);
      await run('COMMIT');
      return result;
    } catch (error) {
      // A connection that failed or went silent is dropped: a ROLLBACK on it would only
      // wait too, and the server rolls back a transaction whose connection ends.
      if (isPostgresUnavailable(error) || isSocketError(error)) broken = true;
      else {
        await run('ROLLBACK').catch(() => {
          broken = true;
        });
      }
      throw error;
    } finally {
      open = false;
      client.release(broken);
    }
  };

  return {
    dialect,
    query: async (sql, params = []) => {
      try {
        return await rows(pool, sql, params, QUERY_TIMEOUT_MS);
      } catch (error) {
        throw unavailable(error);
      }
    },
    exec: async (sql) => {
      await pool.query(statement(sql, undefined, QUERY_TIMEOUT_MS)).catch((error: unknown) => {
        throw unavailable(error);
      });
    },
    transaction: async (work, options = {}) => {
      const timeoutMs = options.unbounded === true ? undefined : QUERY_TIMEOUT_MS;
      for (let attempt = 1; ; attempt++) {
        try {
          return await transactionOnce(work, timeoutMs);
        } catch (error) {
          // A connection lost mid-transaction: nothing committed, unless it was lost
          // after COMMIT went out, which a retry with the same key finds.
          if (!retryable(error) || attempt >= ATTEMPTS) throw unavailable(error);
        }
      }
    },
    close: () => {
      closing ??= pool.end();
      return closing;
    },
  };
}
