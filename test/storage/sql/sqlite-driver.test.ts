/**
 * The SQLite driver's calls run synchronously, one after another on a connection's queue.
 * A burst of them gives the event loop a turn every few milliseconds, so what waits on
 * the loop (a request, a tail's write) is not held up until the whole burst is done.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlDriver } from '../../../src/storage/sql/driver.ts';
import { openSqliteDriver } from '../../../src/storage/sql/sqlite-driver.ts';

/** A statement that keeps SQLite busy for well over a slice (tens of milliseconds). */
const SLOW = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
  SELECT count(*) AS c FROM n`;
const CALLS = 4;

describe('the SQLite driver', () => {
  let dir: string;
  let driver: SqlDriver;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sqlite-driver-'));
    driver = openSqliteDriver(path.join(dir, 'db.sqlite'));
  });
  afterAll(async () => {
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives the event loop a turn between the calls of a long burst', async () => {
    let done = 0;
    const calls = Array.from({ length: CALLS }, () =>
      driver.query(SLOW).then((rows) => {
        done += 1;
        return rows;
      }),
    );
    // Due once the loop gets a turn: before the burst ends, not after it.
    const seen = await new Promise<number>((resolve) =>
      setImmediate(() => {
        resolve(done);
      }),
    );
    const rows = await Promise.all(calls);
    expect(rows.map(([row]) => row?.c)).toEqual(Array.from({ length: CALLS }, () => 300000));
    expect(seen).toBeLessThan(CALLS);
    expect(done).toBe(CALLS);
  });
});
