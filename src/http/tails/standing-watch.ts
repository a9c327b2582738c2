/**
 * Open tails keep checking what their token stands on. A token is verified when its
 * tail opens; without this, a tail opened before its install key was rotated or revoked,
 * its install deleted or its console user removed from the tenant would go on reading
 * until the token's hour ran out, though every other request with that token is refused.
 *
 * One watch per app holds every open tail's credential and checks them all again every
 * 2 s (once per install key, or per token where no install key minted it; a few hundred
 * checks between turns of the event loop), and at once when this process changes what
 * tokens stand on (`SessionTokens.onStandingChange`). A check reads what `TokenStanding`
 * caches for a second, so a change made through another process ends the tails here
 * within 3 s. A tail whose token no longer stands is told why (`revoke`), and ends with a
 * last `Err token_revoked` line.
 */
import { Unauthenticated } from '../../errors.ts';
import type { SessionCredential, SessionTokens } from '../../sessions/tokens.ts';

/** How often open tails' tokens are checked again. */
const STANDING_CHECK_MS = 2_000;
/** Credentials checked between two turns of the event loop. */
const CHUNK = 256;

interface Watched {
  readonly credential: SessionCredential;
  readonly revoke: (why: Unauthenticated) => void;
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
  readonly #watched = new Set<Watched>();
  readonly #stopListening: () => void;
  #timer: NodeJS.Timeout | undefined;
  /** A round of checks is under way. */
  #checking = false;
  /** A change came while a round ran: another round follows it. */
  #again = false;

  constructor(tokens: Pick<SessionTokens, 'stands' | 'onStandingChange'>) {
    this.#tokens = tokens;
    this.#stopListening = tokens.onStandingChange(() => {
      this.#round();
    });
  }

  /** Watches `credential` until the answered function is called; `revoke` hears a refusal. */
  add(credential: SessionCredential, revoke: (why: Unauthenticated) => void): () => void {
    const watched: Watched = { credential, revoke };
    this.#watched.add(watched);
    this.#timer ??= setInterval(() => {
      this.#round();
    }, STANDING_CHECK_MS).unref();
    return () => {
      this.#watched.delete(watched);
      if (this.#watched.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /** Stops the watch: no round starts after this. */
  close(): void {
    this.#stopListening();
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#watched.clear();
  }

  /** Starts a round of checks, or asks for one more after the round under way. */
  #round(): void {
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
  }

  async #checkAll(): Promise<void> {
    const groups = new Map<unknown, Watched[]>();
    for (const watched of this.#watched) {
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
        for (const tail of tails) if (this.#watched.delete(tail)) tail.revoke(refusal);
      }
      done += 1;
      if (done % CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
