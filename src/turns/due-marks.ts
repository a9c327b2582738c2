/**
 * The marks of appends that drive turns (`TurnRuntime.mark`), written with group commit:
 * a mark with none under way is written at once, alone; marks that come while one is
 * written wait for it and then go together, in one statement. Under load an append's
 * mark thus costs a share of one round trip instead of one each, and a quiet service
 * adds no wait. Every caller resolves only once its own mark is durable, so a driving
 * record still never lands before its session is due.
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
  #writing = false;

  constructor(work: WorkStore) {
    this.#work = work;
  }

  /** Marks `session` due at `at`; resolves once the mark is durable. */
  mark(session: string, at: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ session, at, resolve, reject });
      if (!this.#writing) void this.#write();
    });
  }

  async #write(): Promise<void> {
    this.#writing = true;
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
      this.#writing = false;
    }
  }
}
