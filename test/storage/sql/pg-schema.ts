/**
 * A fresh PostgreSQL schema per test file, so parallel files never meet: created on
 * the test server, named `t_<random>`, dropped with everything in it at cleanup. And the
 * migrations each engine ships, which a fresh database must end up with.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { TEST_DATABASE_URL, unreachable } from '../../support/services.ts';

export interface TestSchema {
  readonly url: string;
  readonly schema: string;
  /** Runs a statement on the schema as an administrator would, outside the stores. */
  readonly query: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
  readonly drop: () => Promise<void>;
}

async function run(
  sql: string,
  params: unknown[] = [],
  schema?: string,
): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  });
  try {
    await client.connect();
  } catch (error) {
    throw unreachable('PostgreSQL', TEST_DATABASE_URL, error);
  }
  try {
    return (await client.query<Record<string, unknown>>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function createTestSchema(): Promise<TestSchema> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await run(`CREATE SCHEMA ${schema}`);
  return {
    url: TEST_DATABASE_URL,
    schema,
    query: (sql, params) => run(sql, params, schema),
    drop: async () => {
      await run(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

/** The versions of the migration files `engine` ships, as `schema_migrations` rows. */
export async function shippedMigrations(
  engine: 'sqlite' | 'postgres',
): Promise<{ version: number }[]> {
  const folder = new URL(`../../../src/storage/sql/migrations/${engine}/`, import.meta.url);
  return (await readdir(folder))
    .flatMap((name) => /^(\d{3})_[a-z0-9_]+\.sql$/.exec(name)?.[1] ?? [])
    .map((version) => ({ version: Number(version) }))
    .sort((a, b) => a.version - b.version);
}
