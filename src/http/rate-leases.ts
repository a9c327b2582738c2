/**
 * The rate limit's store with Redis (`@fastify/rate-limit`'s `store`): counts taken from
 * the bucket's window in Redis a few at a time and handed out here one per request.
 *
 * The plugin's own Redis store runs a script per request, a round trip that every request
 * waits for before its body is read, beside the route's own (an append's). Here a process
 * takes `leaseSize(max)` counts at once (`takeCounts`: an INCRBY on the bucket's fixed
 * window), then counts its requests in memory until they are spent or the window ends; a
 * request that finds its bucket's window spent is refused here too, with no round trip.
 * The requests that come while a take is out wait for it, so a bucket has one take in
 * flight per process.
 *
 * What this changes of the limit: a request counts as one of the window's counts still,
 * and no more than `max` go through in a window whatever the number of processes, since
 * every count handed out was first added to the window's count in Redis. A process may
 * hold counts it does not use before its window ends: a client spread over several
 * processes may be refused up to `leaseSize(max) - 1` requests per other process early in
 * a window (a twentieth of the limit each at most). With one process the counts, and the
 * `RateLimit-Remaining` it writes, are exact. Limits under 40 a window take one count at
 * a time, as the plugin's store does.
 */
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { defineRateCount, takeCounts } from '../storage/redis/rate-counts.ts';
import type { LogClient } from '../storage/redis/scripts.ts';

/** What a take is split into at most: a twentieth of the limit per take. */
const LEASE_PARTS = 20;
/** Counts per take at most: with large limits, one request in 50 goes to Redis. */
const MAX_LEASE = 50;
/** Buckets remembered at most (the plugin's own store keeps 20,000 in its LRU). */
const MAX_BUCKETS = 20_000;
/** How often the buckets whose window ended are dropped, ms. */
const SWEEP_MS = 5_000;

/** Counts a process takes at once from a window of `max`. */
export function leaseSize(max: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(max / LEASE_PARTS)));
}

type Answer = Parameters<FastifyRateLimitStore['incr']>[1];

interface Waiter {
  readonly answer: Answer;
  readonly windowMs: number;
  readonly max: number;
}

/** A bucket's counts in this process: `next` to `last` are its to hand out. */
interface Lease {
  next: number;
  last: number;
  /** When its window ends, `performance.now()` ms. */
  expires: number;
  /** Requests waiting while a take is out; null once it is in. */
  waiting: Waiter[] | null;
}

class LeasedCounts implements FastifyRateLimitStore {
  readonly #client: LogClient;
  readonly #prefix: string;
  readonly #leases = new Map<string, Lease>();
  #sweep: NodeJS.Timeout | undefined;

  constructor(client: LogClient, prefix: string) {
    this.#client = client;
    this.#prefix = prefix;
  }

  incr(key: string, answer: Answer, windowMs: number, max: number): void {
    const lease = this.#leases.get(key);
    if (lease !== undefined && lease.waiting !== null) {
      lease.waiting.push({ answer, windowMs, max });
      return;
    }
    const now = performance.now();
    if (lease !== undefined && now < lease.expires) {
      const ttl = Math.ceil(lease.expires - now);
      if (lease.next <= lease.last) {
        answer(null, { current: lease.next, ttl });
        lease.next += 1;
        return;
      }
      // Spent: refused here while the window is over its limit.
      if (lease.last >= max) {
        answer(null, { current: lease.last + 1, ttl });
        return;
      }
    }
    this.#take(key, { answer, windowMs, max });
  }

  child(): FastifyRateLimitStore {
    return this;
  }

  #take(key: string, first: Waiter): void {
    const lease: Lease = { next: 1, last: 0, expires: 0, waiting: [first] };
    this.#remember(key, lease);
    const take = leaseSize(first.max);
    // The window's time left is read in Redis after this: counted from now, the lease
    // ends no later than the window does.
    const sent = performance.now();
    takeCounts(this.#client, this.#prefix + key, take, first.windowMs).then(
      ({ count, ttl }) => {
        lease.next = count - take + 1;
        lease.last = count;
        lease.expires = sent + ttl;
        this.#serve(key, lease, null);
      },
      (error: unknown) => {
        if (this.#leases.get(key) === lease) this.#leases.delete(key);
        this.#serve(key, lease, error instanceof Error ? error : new Error(String(error)));
      },
    );
  }

  /** Answers what waited on `lease`'s take: from it, or from a take after it. */
  #serve(key: string, lease: Lease, error: Error | null): void {
    const waiting = lease.waiting ?? [];
    lease.waiting = null;
    for (const { answer, windowMs, max } of waiting) {
      if (error === null) this.incr(key, answer, windowMs, max);
      else answer(error);
    }
  }

  /** Keeps `lease` as the newest of its bucket; the oldest go past `MAX_BUCKETS`. */
  #remember(key: string, lease: Lease): void {
    this.#leases.delete(key);
    // A Map keeps insertion order: the first buckets are the oldest takes.
    for (const bucket of this.#leases.keys()) {
      if (this.#leases.size < MAX_BUCKETS) break;
      this.#leases.delete(bucket);
    }
    this.#leases.set(key, lease);
    this.#armSweep();
  }

  /** Sets the sweep of ended windows for `SWEEP_MS` from now, unless one is set. */
  #armSweep(): void {
    if (this.#sweep !== undefined) return;
    this.#sweep = setTimeout(this.#sweepEnded, SWEEP_MS);
    this.#sweep.unref();
  }

  /** Drops the buckets whose window ended, and comes back while any are left. */
  readonly #sweepEnded = (): void => {
    this.#sweep = undefined;
    const now = performance.now();
    for (const [bucket, held] of this.#leases) {
      if (held.waiting === null && held.expires <= now) this.#leases.delete(bucket);
    }
    if (this.#leases.size > 0) this.#armSweep();
  };
}

/** The plugin's `store` for counts in Redis under `prefix` (one per deployment). */
export function leasedCounts(client: LogClient, prefix: string): FastifyRateLimitStoreCtor {
  defineRateCount(client);
  return class extends LeasedCounts {
    constructor() {
      super(client, prefix);
    }
  };
}
