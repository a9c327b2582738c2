/**
 * What one client may hold of the tails: how many tails at once, how
 * many unsent bytes each, for how long, and how soon a silent WebSocket peer counts as
 * gone. A tail is the one request that never ends by itself, so without a cap a client
 * opens tails until the process runs out of sockets or memory.
 *
 * Caps are counted in this process (every process of a deployment allows its own): per
 * credential (a session token; each minted token counts on its own) and per session
 * (every token of the session together, so minting more tokens does not lift it). The
 * tail past either cap is refused before it starts, as HTTP (a WebSocket upgrade
 * included), with 429 `too_many_tails`; a slot is free again as soon as a tail closes.
 */
import { RateLimited } from '../../errors.ts';

/** Settings of the tails. */
export interface TailLimits {
  /** `TAILS_PER_CREDENTIAL`: open tails per session token. */
  readonly perCredential: number;
  /** `TAILS_PER_SESSION`: open tails per session, over all its tokens. */
  readonly perSession: number;
  /**
   * `TAIL_BUFFER_BYTES`: unsent bytes a tail may hold in this process before it stops
   * taking lines and waits for its reader (plus at most the one line that crossed it).
   */
  readonly bufferBytes: number;
  /** `TAIL_LAG_TIMEOUT`: how long a tail may wait for its reader before it is closed (ms). */
  readonly lagMs: number;
  /** `WS_PING_INTERVAL`: a WebSocket peer silent this long is pinged (ms). */
  readonly pingIntervalMs: number;
  /** `WS_PONG_TIMEOUT`: a ping unanswered this long ends the connection (ms). */
  readonly pongTimeoutMs: number;
}

/** The defaults of the settings (README "Slow and greedy clients"). */
export const TAIL_LIMITS: TailLimits = {
  perCredential: 50,
  perSession: 1_000,
  bufferBytes: 256 * 1024,
  lagMs: 5_000,
  pingIntervalMs: 30_000,
  pongTimeoutMs: 10_000,
};

/** Counts of open tails by key; a key leaves the map with its last tail. */
class Counts {
  readonly #counts = new Map<string, number>();

  get(key: string): number {
    return this.#counts.get(key) ?? 0;
  }

  add(key: string, by: 1 | -1): void {
    const count = this.get(key) + by;
    if (count <= 0) this.#counts.delete(key);
    else this.#counts.set(key, count);
  }
}

/** The open tails of one process, by credential and by session. */
export class TailSlots {
  readonly #limits: Pick<TailLimits, 'perCredential' | 'perSession'>;
  readonly #byCredential = new Counts();
  readonly #bySession = new Counts();

  constructor(limits: Pick<TailLimits, 'perCredential' | 'perSession'>) {
    this.#limits = limits;
  }

  /**
   * Takes a slot for a tail of `session` read with `credential`, and answers the function
   * that frees it (once, however often it is called).
   * @throws RateLimited `too_many_tails` when either cap is reached.
   */
  take(credential: string, session: string): () => void {
    const { perCredential, perSession } = this.#limits;
    if (this.#byCredential.get(credential) >= perCredential) {
      throw tooMany(`this token already holds ${perCredential} open tails`, perCredential);
    }
    if (this.#bySession.get(session) >= perSession) {
      throw tooMany(`this session already has ${perSession} open tails`, perSession);
    }
    this.#byCredential.add(credential, 1);
    this.#bySession.add(session, 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#byCredential.add(credential, -1);
      this.#bySession.add(session, -1);
    };
  }
}

function tooMany(message: string, limit: number): RateLimited {
  return new RateLimited('too_many_tails', `${message}; close one to open another`, {
    extensions: { limit },
  });
}
