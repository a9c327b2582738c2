/**
 * The marks of appends that drive turns (`TurnRuntime.mark`), written with group commit:
 * the marks asked for in one turn of the event loop go in one statement, written once the
 * turn's I/O callbacks have run (`setImmediate`); marks that come while a statement is
 * under way wait for it and then go together in the next. Every caller resolves only once
 * its own mark is durable, so a driving record still never lands before its session is
 * due.
 *
 * A turn's end, not the first mark, opens the statement because an embedded work store
 * (SQLite through `node:sqlite`) writes synchronously: with nothing ever under way while
 * the next request is read, every append paid a commit of its own (six `fcntl` and four
 * `pwrite` system calls, some 40 µs on a 2-core machine, against 2 µs a mark in a
 * statement of 32). Waiting for the turn's end costs a quiet service nothing measurable:
 * the check phase follows the callback that asked.
 */
import type { WorkStore } from '../storage/work-store.ts';

interface Waiting {
  readonly session: string;
  readonly at: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Sessions marked per statement at most; more wait for the next one. */
const MAX_GROUP = 500;

export class DueMarks {
  readonly #work: WorkStore;
  #waiting: Waiting[] = [];
  /** A statement is under way, or one is set for the end of this turn. */
  #busy = false;

  constructor(work: WorkStore) {
    this.#work = work;
  }

  /** Marks `session` due at `at`; resolves once the mark is durable. */
  mark(session: string, at: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ session, at, resolve, reject });
      if (!this.#busy) {
        this.#busy = true;
        setImmediate(() => {
          void this.#write();
        });
      }
    });
  }

  async #write(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const group = this.#waiting.splice(0, MAX_GROUP);
        try {
          await this.#work.markDueMany(group);
          for (const mark of group) mark.resolve();
        } catch (error) {
          for (const mark of group) mark.reject(error);
        }
      }
    } finally {
      this.#busy = false;
    }
  }
}
