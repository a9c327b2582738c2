/**
 * The dialect seam of the SQL stores: the one interface the log and control stores talk
 * to, with a SQLite (`node:sqlite`) and a PostgreSQL (`pg`) implementation.
 *
 * Queries are written once in the subset both engines share (ON CONFLICT, RETURNING,
 * integer columns for times and cursors, text for JSON) with `?` placeholders; the
 * PostgreSQL driver numbers them. The only other differences the stores see are the
 * few clauses in `SqlDialect`. No client, pool or transaction type leaks past the stores.
 */

/** A value a query binds or answers: JSON travels as text, times and cursors as integers. */
export type SqlValue = string | number | null;

/** One answered row, by column name. */
export type SqlRow = Readonly<Record<string, unknown>>;

/** What a store may run: on the pool, or inside one transaction. */
export interface SqlQueryable {
  /** Runs one statement with `?` placeholders and answers its rows (RETURNING included). */
  query(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/** The clauses the two engines spell differently. */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Appended to a SELECT inside a transaction to lock the rows it reads. PostgreSQL:
   * `FOR UPDATE`; SQLite: nothing, since `BEGIN IMMEDIATE` already holds the one write lock.
   */
  readonly lockRows: string;
}

export interface TransactionOptions {
  /**
   * Lifts the statement timeout of a server driver (PostgreSQL, `QUERY_TIMEOUT_MS`): for
   * the migrations, whose lock wait and DDL may take long.
   */
  readonly unbounded?: boolean;
}

export interface SqlDriver extends SqlQueryable {
  readonly dialect: SqlDialect;
  /**
   * Runs `work` in one transaction that takes the write lock up front (SQLite
   * `BEGIN IMMEDIATE`; PostgreSQL `BEGIN` and row locks), commits when it resolves and
   * rolls back when it throws, rethrowing. `work` must have no effect outside the
   * database: a driver may run it again after a lock timeout.
   */
  transaction<T>(work: (tx: SqlQueryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Waits for what is under way, then releases the connections; a second call is a no-op. */
  close(): Promise<void>;
}

/** Reads an integer column (PostgreSQL `bigint` arrives as a string unless parsed). */
export function int(row: SqlRow, column: string): number {
  const value = row[column];
  if (typeof value === 'number') return value;
  if (typeof value === 'string' || typeof value === 'bigint') return Number(value);
  throw new TypeError(`column ${column} is not an integer`);
}

/** Reads a text column. */
export function text(row: SqlRow, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw new TypeError(`column ${column} is not text`);
  return value;
}

/** Reads a nullable text column. */
export function textOrNull(row: SqlRow, column: string): string | null {
  const value = row[column];
  return value === null || value === undefined ? null : text(row, column);
}

/** `(?, ?, ?), (?, ?, ?)` for a multi-row VALUES list. */
export function valuesList(rows: number, columns: number): string {
  const one = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => one).join(', ');
}
