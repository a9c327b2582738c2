/**
 * Numbered migrations, applied when a store opens.
 *
 * Each engine has its own folder (`migrations/sqlite`, `migrations/postgres`) of files
 * named `NNN_what.sql`; a file is applied once, in number order, and recorded in
 * `schema_migrations`. Everything runs in one transaction that first takes the
 * database-wide lock (PostgreSQL `pg_advisory_xact_lock`, SQLite `BEGIN IMMEDIATE`), so
 * two processes starting together never both apply a file: the second waits, then finds
 * it recorded.
 */
import { readdir, readFile } from 'node:fs/promises';
import { int, type SqlDriver } from './driver.ts';

/** An arbitrary constant naming "the migrations" among PostgreSQL advisory locks. */
const MIGRATION_LOCK = 0x5e55_10c0;

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly url: URL;
}

async function migrationsOf(engine: string): Promise<Migration[]> {
  const folder = new URL(`./migrations/${engine}/`, import.meta.url);
  const files = await readdir(folder);
  return files
    .flatMap((name) => {
      const match = /^(\d{3})_[a-z0-9_]+\.sql$/.exec(name);
      return match?.[1] === undefined
        ? []
        : [{ version: Number(match[1]), name, url: new URL(name, folder) }];
    })
    .sort((a, b) => a.version - b.version);
}

/**
 * Brings the database to the newest schema this build knows; answers the versions it
 * applied (none when it was current).
 */
export async function migrate(driver: SqlDriver, now: number): Promise<number[]> {
  const migrations = await migrationsOf(driver.dialect.name);
  const scripts = await Promise.all(migrations.map((migration) => readFile(migration.url, 'utf8')));
  return driver.transaction(
    async (tx) => {
      if (driver.dialect.name === 'postgres') {
        await tx.query('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
      }
      await tx.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)',
      );
      const done = new Set(
        (await tx.query('SELECT version FROM schema_migrations')).map((row) => int(row, 'version')),
      );
      const applied: number[] = [];
      for (const [i, migration] of migrations.entries()) {
        if (done.has(migration.version)) continue;
        await tx.exec(scripts[i] ?? '');
        await tx.query('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)', [
          migration.version,
          migration.name,
          now,
        ]);
        applied.push(migration.version);
      }
      return applied;
    },
    { unbounded: true },
  );
}
