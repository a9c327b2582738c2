/**
 * Open tails end when their token expires, and keep checking what it stands on. A token
 * is verified when its tail opens; without this, a tail opened before its install key
 * was rotated or revoked, its install deleted or its console user removed from the tenant
 * would go on reading until the token's hour ran out, though every other request with
 * that token is refused.
 *
 * One watch per app holds every open tail's credential and checks them all again every
 * 2 s (once per install key, or per token where no install key minted it; a few hundred
 * checks between turns of the event loop), and at once when this process changes what
 * tokens stand on (`SessionTokens.onStandingChange`). A check reads what `TokenStanding`
 * caches for a second, so a change made through another process ends the tails here
 * within 3 s. A tail whose token no longer stands is ended with a `TokenRevoked` saying
 * why, and its last line is `Err token_revoked`; one whose token expires is ended with
 * `expired` when it does (decisions row 68), through one timer for every tail
 * (`deadlines.ts`).
 */
import type { Clock } from '../../clock.ts';
import { Unauthenticated } from '../../errors.ts';
import type { SessionCredential, SessionTokens } from '../../sessions/tokens.ts';
import { Deadlines } from './deadlines.ts';
import { TokenRevoked, type TailEnd } from './tail-end.ts';

/** How often open tails' tokens are checked again. */
const STANDING_CHECK_MS = 2_000;
/** Credentials checked between two turns of the event loop. */
const CHUNK = 256;

/** One open tail: its credential, the `TailEnd` that ends it, its place in the deadlines. */
export interface Watched {
  readonly credential: SessionCredential;
  readonly tail: TailEnd;
  /** The token's expiry (ms): the tail ends there. */
  readonly at: number;
  slot: number;
}

/**
 * What a credential's standing depends on, as the key tails share one check under. A
 * token an install minted stands on that install key (its tag names the key, and so the
 * install): every tail of every session opened with the key shares one check, and ten
 * thousand tails of one install cost one check a round, not a session lookup each. Any
 * other token (a console user's, on its own session) is checked on its own.
 */
function groundOf(credential: SessionCredential): unknown {
  return credential.installKey === undefined ? credential : `install-key:${credential.installKey}`;
}

/** Where a tail's credential is checked; see the module comment. */
export class StandingWatch {
  readonly #tokens: Pick<SessionTokens, 'stands' | 'onStandingChange'>;
  /** Every watched tail, by when its token expires. */
  readonly #watched: Deadlines<Watched>;
  readonly #stopListening: () => void;
  #timer: NodeJS.Timeout | undefined;
  /** A round of checks is under way. */
  #checking = false;
  /** A change came while a round ran: another round follows it. */
  #again = false;

  constructor(tokens: Pick<SessionTokens, 'stands' | 'onStandingChange'>, clock: Clock) {
    this.#tokens = tokens;
    this.#watched = new Deadlines(clock, (watched) => {
      this.#stopRounds();
      watched.tail.end('expired');
    });
    this.#stopListening = tokens.onStandingChange(() => {
      this.#round();
    });
  }

  /**
   * Watches `credential` until `remove` is given the answer: ends `tail` once the
   * token expires or no longer stands (see the module comment).
   */
  add(credential: SessionCredential, tail: TailEnd): Watched {
    const watched: Watched = { credential, tail, at: credential.expires, slot: -1 };
    this.#watched.add(watched);
    this.#timer ??= setInterval(this.#round, STANDING_CHECK_MS).unref();
    return watched;
  }

  /** Stops watching a tail (it ended). */
  remove(watched: Watched): void {
    this.#watched.remove(watched);
    this.#stopRounds();
  }

  /** Stops the watch: no round starts after this. */
  close(): void {
    this.#stopListening();
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#watched.close();
  }

  /** No tail left to check: the rounds stop until one is added. */
  #stopRounds(): void {
    if (this.#watched.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Starts a round of checks, or asks for one more after the round under way. */
  readonly #round = (): void => {
    if (this.#checking) {
      this.#again = true;
      return;
    }
    this.#checking = true;
    void this.#checkAll().finally(() => {
      this.#checking = false;
      if (this.#again) {
        this.#again = false;
        this.#round();
      }
    });
  };

  async #checkAll(): Promise<void> {
    const groups = new Map<unknown, Watched[]>();
    for (const watched of this.#watched.entries) {
      const key = groundOf(watched.credential);
      const same = groups.get(key);
      if (same === undefined) groups.set(key, [watched]);
      else same.push(watched);
    }
    let done = 0;
    for (const tails of groups.values()) {
      const first = tails[0];
      if (first === undefined) continue;
      const refusal = await this.#tokens.stands(first.credential).then(
        () => null,
        (error: unknown) => (error instanceof Unauthenticated ? error : null),
      );
      if (refusal !== null) {
        const revoked = new TokenRevoked(refusal.message);
        for (const watched of tails) if (this.#watched.remove(watched)) watched.tail.end(revoked);
        this.#stopRounds();
      }
      done += 1;
      if (done % CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
