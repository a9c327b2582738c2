/**
 * Keeps a `normal` connection's write-ahead log flushed to disk from the thread pool, so
 * that its checkpoints do not wait for it on the event loop.
 *
 * A `normal` commit hands its pages to the OS and does not fsync (`sqlite-driver.ts`);
 * the log is fsynced by the checkpoint that copies it into the database, which SQLite
 * runs inside the commit that crosses `wal_autocheckpoint`, synchronously. With a
 * thousand due marks a second that was a megabyte or more of log to write out every
 * half second, 3 to 5 ms with the loop held each time: the 100 x 1 latency rows of
 * `npm run bench` read 4 to 12 ms at p99 with it, 2.3 to 4.6 without checkpoints at all.
 * Here the log file is fdatasync'd every `FLUSH_MS` while the connection is written to,
 * through `FileHandle.datasync`, which runs off the loop; a checkpoint then finds little
 * of the log not yet on disk. It only flushes sooner what would be flushed anyway.
 */
import { open, type FileHandle } from 'node:fs/promises';

/** How often the log is flushed while it is written to, ms. */
const FLUSH_MS = 50;

export class WalFlusher {
  readonly #path: string;
  #handle: Promise<FileHandle | null> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** `path`: the database file; its log is `<path>-wal`. */
  constructor(path: string) {
    this.#path = `${path}-wal`;
  }

  /** The connection wrote (or may have): a flush follows within `FLUSH_MS`. */
  wrote(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(this.#flush, FLUSH_MS);
    this.#timer.unref();
  }

  readonly #flush = (): void => {
    // A log not there yet (no write since the database was opened) is looked for again
    // at the next flush.
    const handle = (this.#handle ??= open(this.#path, 'r').catch(() => {
      this.#handle = undefined;
      return null;
    }));
    void handle
      .then((opened) => (this.#closed ? undefined : opened?.datasync()))
      // A failed flush leaves the checkpoint to do it, as without this.
      .catch(() => undefined)
      .finally(() => {
        this.#timer = undefined;
      });
  };

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const handle = await this.#handle;
    await handle?.close().catch(() => undefined);
  }
}
