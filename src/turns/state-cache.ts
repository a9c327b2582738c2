/**
 * The turn states a process keeps in memory, least recently used first out. A state is a
 * cache of what replaying the session's log gives (`session-state.ts`), so dropping one
 * loses nothing: the next reader rebuilds it from the saved state and the log. Concurrent
 * first reads of one session share one build.
 *
 * A state is kept while its session is busy and dropped once no one has asked for it for
 * `idleMs`, as well as past `capacity`. A state (the turn machine's actor, its transcript)
 * is some kilobytes, the largest thing a process holds per session, and one kept for
 * every session that ran a turn lately is most of what a busy process's heap grows by;
 * the heap's growth limit follows what is live, so it is the process's size too. An idle
 * session's next turn or status read pays for the drop with a rebuild: one read of its
 * saved state from the work store, and one of the log for the records after it (a
 * driver leaving saves its state once SAVE_AT_REST records are unsaved, so at most those).
 * A session whose driver runs here (`busy`) is not idle, however long ago its state was
 * asked for: its driver holds the state, and a reader building a second one from the
 * stores would agree with it but cost a second copy of the session's transcript.
 */
import type { SessionState } from './session-state.ts';

/** States kept at most by default: enough for the sessions a process is busy with. */
const DEFAULT_CAPACITY = 2000;
/**
 * How long a state not asked for is kept by default (ms): past a driver's linger and the
 * gap between the messages of a conversation carried on by a program.
 */
const DEFAULT_STATE_IDLE_MS = 5_000;

interface Entry {
  readonly state: Promise<SessionState | null>;
  /** When it was last asked for (the clock's ms). */
  readonly used: number;
}

export interface StateCacheOptions {
  readonly build: (session: string) => Promise<SessionState | null>;
  readonly now: () => number;
  /** Whether `session` is in use (its driver runs here), so its state is kept. */
  readonly busy: (session: string) => boolean;
  readonly capacity?: number | undefined;
  readonly idleMs?: number | undefined;
}

export class StateCache {
  readonly #build: (session: string) => Promise<SessionState | null>;
  readonly #now: () => number;
  readonly #busy: (session: string) => boolean;
  readonly #capacity: number;
  readonly #idleMs: number;
  /** Least recently asked for first. */
  readonly #states = new Map<string, Entry>();

  constructor(options: StateCacheOptions) {
    this.#build = options.build;
    this.#now = options.now;
    this.#busy = options.busy;
    this.#capacity = options.capacity ?? DEFAULT_CAPACITY;
    this.#idleMs = options.idleMs ?? DEFAULT_STATE_IDLE_MS;
  }

  /** States held now (built or being built), idle ones dropped first. */
  get size(): number {
    this.#dropIdle(this.#now());
    return this.#states.size;
  }

  /** Forgets the state of `session`; the next reader rebuilds it from the log. */
  drop(session: string): void {
    this.#states.delete(session);
  }

  /** The state of `session` (null when no such session), built once and then reused. */
  get(session: string): Promise<SessionState | null> {
    const now = this.#now();
    this.#dropIdle(now);
    let state = this.#states.get(session)?.state;
    if (state === undefined) {
      const built = this.#build(session);
      state = built;
      // A failed or empty build is not kept: the next reader tries again.
      const forget = () => {
        if (this.#states.get(session)?.state === built) this.#states.delete(session);
      };
      built.then((value) => {
        if (value === null) forget();
      }, forget);
    } else {
      this.#states.delete(session);
    }
    this.#states.set(session, { state, used: now });
    if (this.#states.size > this.#capacity) {
      const oldest = this.#states.keys().next().value;
      if (oldest !== undefined) this.#states.delete(oldest);
    }
    return state;
  }

  /**
   * Drops the states not asked for since `now - idleMs` (the oldest come first); one of a
   * busy session counts as asked for now. (A state moved to the end is met again at the
   * end of the walk, which stops there.)
   */
  #dropIdle(now: number): void {
    for (const [session, entry] of this.#states) {
      if (entry.used > now - this.#idleMs) return;
      this.#states.delete(session);
      if (this.#busy(session)) this.#states.set(session, { state: entry.state, used: now });
    }
  }
}
