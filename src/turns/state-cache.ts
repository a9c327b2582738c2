/**
 * The turn states a process keeps in memory, least recently used first out. A state is a
 * cache of what replaying the session's log gives (`session-state.ts`), so dropping one
 * loses nothing: the next reader rebuilds it from the log. Concurrent first reads of one
 * session share one build.
 */
import type { SessionState } from './session-state.ts';

/** States kept by default: enough for the sessions a process is busy with. */
const DEFAULT_CAPACITY = 2000;

export class StateCache {
  readonly #build: (session: string) => Promise<SessionState | null>;
  readonly #capacity: number;
  readonly #states = new Map<string, Promise<SessionState | null>>();

  constructor(
    build: (session: string) => Promise<SessionState | null>,
    capacity = DEFAULT_CAPACITY,
  ) {
    this.#build = build;
    this.#capacity = capacity;
  }

  /** States held now (built or being built). */
  get size(): number {
    return this.#states.size;
  }

  /** Forgets the state of `session`; the next reader rebuilds it from the log. */
  drop(session: string): void {
    this.#states.delete(session);
  }

  /** The state of `session` (null when no such session), built once and then reused. */
  get(session: string): Promise<SessionState | null> {
    let state = this.#states.get(session);
    if (state === undefined) {
      state = this.#build(session);
      // A failed or empty build is not kept: the next reader tries again.
      state.then(
        (built) => built === null && this.#states.delete(session),
        () => this.#states.delete(session),
      );
    } else {
      this.#states.delete(session);
    }
    this.#states.set(session, state);
    if (this.#states.size > this.#capacity) {
      const oldest = this.#states.keys().next().value;
      if (oldest !== undefined) this.#states.delete(oldest);
    }
    return state;
  }
}
