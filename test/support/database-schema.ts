/**
 * A PostgreSQL schema of its own for each test app (`app.ts`), so apps of test files that
 * run in parallel on the one test server never meet. Sharing one was not harmless: a
 * turn runtime drives every due session of its work store, so an app drove the sessions
 * of another file's app, and one whose log was elsewhere (Redis) found their logs empty
 * and archived them as idle at once; the owner's own archive then answered as a repeat,
 * landing nothing.
 *
 * The app's connections reach the schema through the `options` of its URL, as a
 * deployment's `DATABASE_URL` could. The schema is made and dropped on the test server
 * directly: a test's URL may go through a TCP proxy it cuts (`tcp-proxy.ts`).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL, unreachable } from './services.ts';

/** How long the drop waits for a lock a cut connection may still hold on the server. */
const DROP_LOCK_TIMEOUT = '5s';
/** lock_not_available: the drop's lock wait timed out. */
const LOCK_NOT_AVAILABLE = '55P03';

export interface OwnSchema {
  /** The test's URL, its connections' `search_path` set to the schema. */
  readonly url: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

async function administer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  try {
    await client.connect();
  } catch (error) {
    throw unreachable('PostgreSQL', TEST_DATABASE_URL, error);
  }
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh schema `t_<random>` on the test server, for a test app given `url`. */
export async function ownSchema(url: string): Promise<OwnSchema> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await administer(`CREATE SCHEMA ${schema}`);
  const own = new URL(url);
  own.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: own.toString(),
    drop: async () => {
      try {
        await administer(
          `SET lock_timeout = '${DROP_LOCK_TIMEOUT}'; DROP SCHEMA ${schema} CASCADE`,
        );
      } catch (error) {
        // A transaction a test cut off mid-way (its proxy muted) keeps its locks until the
        // proxy closes, after the app: its schema is left on the throwaway test server.
        if (!(error instanceof pg.DatabaseError && error.code === LOCK_NOT_AVAILABLE)) throw error;
      }
    },
  };
}
