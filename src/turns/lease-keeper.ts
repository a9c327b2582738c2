/**
 * The leases of one process's drivers, renewed together: one statement every third of
 * `LEASE_MS` for every lease the process holds (in chunks of `RENEW_CHUNK` names), not
 * one per driver. A driver that stays between the turns of a conversation (its
 * `lingerMs`) holds its lease all the while, so with a thousand conversations under way
 * one renewal each would be hundreds of statements a second.
 *
 * A lease the store no longer gives this holder (another process took it after it
 * lapsed) aborts its driver's signal, and so does a failed renewal: the store's answer
 * is unknown, and a driver must never work on without its lease.
 *
 * Each held lease also knows until when the store has confirmed it (`heldUntil`): the
 * time its last taking or renewal asked for, counted from before that statement was sent,
 * so never later than the store's own expiry.
 */
import type { Clock } from '../clock.ts';
import type { WorkStore } from '../storage/work-store.ts';

/** Names per renewal statement. */
const RENEW_CHUNK = 500;

/** A held lease: aborted once it is lost. */
export interface HeldLease {
  readonly signal: AbortSignal;
}

interface Held {
  readonly controller: AbortController;
  /** Until when the store has confirmed the lease (see above). */
  until: number;
}

export class LeaseKeeper {
  readonly #work: WorkStore;
  readonly #holder: string;
  readonly #clock: Clock;
  readonly #leaseMs: number;
  readonly #held = new Map<string, Held>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(work: WorkStore, holder: string, clock: Clock, leaseMs: number) {
    this.#work = work;
    this.#holder = holder;
    this.#clock = clock;
    this.#leaseMs = leaseMs;
  }

  /** Takes the lease `name`; null when another holder has it. */
  async take(name: string): Promise<HeldLease | null> {
    const now = this.#clock.now();
    if (!(await this.#work.acquireLease(name, this.#holder, now, this.#leaseMs))) return null;
    const controller = new AbortController();
    this.#held.get(name)?.controller.abort();
    this.#held.set(name, { controller, until: now + this.#leaseMs });
    // Taken while the process shuts down: the driver stops at once and releases it.
    if (this.#closed) controller.abort();
    this.#timer ??= setInterval(() => void this.#renew(), Math.max(50, this.#leaseMs / 3));
    return { signal: controller.signal };
  }

  /**
   * Until when the store has confirmed the lease `name` to this process; null when the
   * process does not hold it (or has seen it lost).
   */
  heldUntil(name: string): number | null {
    const held = this.#held.get(name);
    return held === undefined || held.controller.signal.aborted ? null : held.until;
  }

  /** Gives the lease up, whether or not it is still held. */
  async release(name: string, lease: HeldLease): Promise<void> {
    if (this.#held.get(name)?.controller.signal === lease.signal) this.#held.delete(name);
    if (this.#held.size === 0) this.#stop();
    await this.#work.releaseLease(name, this.#holder);
  }

  /** Aborts every held lease (shutdown); the drivers release them as they stop. */
  abortAll(): void {
    this.#closed = true;
    for (const held of this.#held.values()) held.controller.abort();
    this.#stop();
  }

  async #renew(): Promise<void> {
    const names = [...this.#held.keys()];
    const now = this.#clock.now();
    for (let start = 0; start < names.length; start += RENEW_CHUNK) {
      const chunk = names.slice(start, start + RENEW_CHUNK);
      let kept: ReadonlySet<string>;
      try {
        kept = new Set(await this.#work.renewLeases(chunk, this.#holder, now, this.#leaseMs));
      } catch {
        kept = new Set();
      }
      for (const name of chunk) {
        const held = this.#held.get(name);
        if (held === undefined) continue;
        if (kept.has(name)) held.until = Math.max(held.until, now + this.#leaseMs);
        else held.controller.abort();
      }
    }
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
