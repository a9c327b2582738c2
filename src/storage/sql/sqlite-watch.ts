/**
 * How a SQLite log store hears of records landed by other connections to its file: a
 * second service process on the same data folder, or another store instance in this one
 * (seen within 50 ms, where a once-a-second poll took about 1 s).
 *
 * The choice: a doorbell file the kernel watches for us. Right after a commit that
 * landed records, a store writes one byte to `<file>-appended` (`committed`, not synced:
 * it carries no data, only the moment). Every store watches that file (`fs.watch`:
 * inotify on Linux, kqueue or FSEvents on macOS) and checks when it is written, so a
 * record from another process is heard within a millisecond or two, and nothing runs
 * while nobody writes. Why not the alternatives:
 * - Polling `PRAGMA data_version` every 10 to 20 ms meets 50 ms too, but costs a query
 *   every tick for as long as anything is followed, and SQLite cannot tell whether
 *   another process is on the file, to poll only then.
 * - Watching the write-ahead log itself hears every commit, but too early: a commit
 *   writes its frames, syncs them and only then publishes them in the shared-memory
 *   index readers consult, so the check its write event causes finds nothing new yet,
 *   and no later event comes. The doorbell is rung after COMMIT has returned.
 *
 * What a ring costs a watcher: one `PRAGMA data_version` (it moves only when another
 * connection committed, so this instance's own rings, whose records already reached its
 * tails, end there) and, when it moved, one query for the heads of the followed streams;
 * each feed whose stream moved past what it delivered reads once (`stream-fanout.ts`).
 * Rings during a check fold into one more check. Nothing is checked while no stream is
 * followed: a feed reads once when it opens, so it cannot miss what landed before.
 *
 * Backstops: a check every second while something is followed, for commits that ring no
 * bell (a tool writing the file) or a ring the file system lost; and where the doorbell
 * cannot be watched at all (no inotify watches left, an exotic file system) a check
 * every 15 ms instead, which keeps the 50 ms.
 */
import { closeSync, openSync, watch, writeSync, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { int, text, type SqlDriver } from './driver.ts';
import type { LogSignals } from './signals.ts';
import type { Wakeups } from './wakeups.ts';

/** A check while something is followed, should a ring be missed. */
const BACKSTOP_MS = 1000;
/** A check while something is followed, when the doorbell cannot be watched. */
const POLL_MS = 15;
/** Streams per heads query, well under SQLite's bound on parameters. */
const HEADS_CHUNK = 500;
const RING = Buffer.from([1]);

/** Watches commits to `file` by other connections and wakes the followed streams they moved. */
export function watchSqlite(driver: SqlDriver, wakeups: Wakeups, file: string): LogSignals {
  const bell = `${path.resolve(file)}-appended`;
  let seen: number | undefined;
  let checking = false;
  let again = false;
  let closed = false;

  /** One check: has anyone else committed, and if so, which followed streams moved. */
  const checkOnce = async (): Promise<void> => {
    const [row] = await driver.query('PRAGMA data_version');
    const version = row === undefined ? 0 : int(row, 'data_version');
    if (version === seen) return;
    const streams = wakeups.followed();
    for (let start = 0; start < streams.length; start += HEADS_CHUNK) {
      const chunk = streams.slice(start, start + HEADS_CHUNK);
      const heads = await driver.query(
        `SELECT stream, head FROM streams WHERE stream IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      );
      for (const head of heads) wakeups.wake(text(head, 'stream'), int(head, 'head'));
    }
    // Only once every head was asked: a failed query leaves the next check to ask again.
    seen = version;
  };

  /** Whether an event came during the check that just ran, and it is still worth one more. */
  const more = (): boolean => again && !closed && !wakeups.idle;

  const check = (): void => {
    if (closed) return;
    if (wakeups.idle) {
      // The next follower's feed reads for itself; the next check asks afresh.
      seen = undefined;
      return;
    }
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    void (async () => {
      do {
        again = false;
        // A closed or busy database: the next event or tick asks again.
        await checkOnce().catch(() => undefined);
      } while (more());
      checking = false;
    })();
  };

  // Opened (and so created) before it is watched, owner only like the database beside
  // it. Without it, other processes hear this store's records at their backstop.
  let door: number | undefined;
  try {
    door = openSync(bell, 'w', 0o600);
  } catch {
    door = undefined;
  }

  let watcher: FSWatcher | undefined;
  let timer = setInterval(check, BACKSTOP_MS);
  timer.unref();
  const pollInstead = (): void => {
    watcher?.close();
    watcher = undefined;
    clearInterval(timer);
    if (closed) return;
    timer = setInterval(check, POLL_MS);
    timer.unref();
  };
  try {
    // The doorbell itself, not the folder: the folder's other files (the log, its
    // shared memory) change on every commit and would wake this process for nothing.
    watcher = watch(bell, { persistent: false }, check);
    watcher.on('error', pollInstead);
  } catch {
    pollInstead();
  }

  return {
    channel: null,
    publish: () => Promise.resolve(),
    committed: () => {
      if (door === undefined) return;
      try {
        writeSync(door, RING, 0, 1, 0);
      } catch {
        // A full disk: the records are committed; watchers hear of them at their backstop.
      }
    },
    close: () => {
      closed = true;
      clearInterval(timer);
      watcher?.close();
      if (door !== undefined) closeSync(door);
      door = undefined;
      return Promise.resolve();
    },
  };
}
