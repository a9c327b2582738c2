/**
 * Retention: what ends is not kept for ever. A resource written with an
 * `expires` time (a proposal: ten minutes of life plus `PROPOSAL_RETENTION`) is deleted
 * by a periodic sweep once that time has come, with its index entries and its actor's
 * snapshot (`ControlStore.purgeExpired`). Nothing an unauthenticated client sends is kept
 * past it: `POST /appdoc` is bounded in size and rate and its proposal in time.
 *
 * Every process sweeps (at start and then every `everyMs`); purges are idempotent, so
 * processes sharing a store need no coordination.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import type { ControlStore } from '../storage/control-store.ts';

/** How long an ended proposal is kept by default: a day after its ten minutes. */
export const DEFAULT_PROPOSAL_RETENTION_MS = 86_400_000;
/** How often a process sweeps by default. */
export const DEFAULT_RETENTION_SWEEP_MS = 60_000;
/** Resources one purge deletes at most; a sweep repeats purges until fewer are due. */
const PURGE_BATCH = 200;
/** Purges one sweep runs at most, so a backlog is worked off over several sweeps. */
const PURGES_PER_SWEEP = 50;

export interface RetentionOptions {
  readonly store: ControlStore;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly everyMs?: number;
}

/** The periodic purge of expired resources of one process. */
export class RetentionSweep {
  readonly #options: RetentionOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

  constructor(options: RetentionOptions) {
    this.#options = options;
  }

  /** Sweeps now, then every `everyMs` until `close()`. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(
      () => void this.sweep(),
      this.#options.everyMs ?? DEFAULT_RETENTION_SWEEP_MS,
    );
    this.#timer.unref();
    void this.sweep();
  }

  /** Deletes what is due now; answers how many resources went. A failure is logged, not thrown. */
  sweep(): Promise<number> {
    // One sweep at a time: a slow store never piles sweeps up.
    this.#running ??= this.#purge().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #purge(): Promise<number> {
    const { store, clock, logger } = this.#options;
    let total = 0;
    try {
      for (let i = 0; i < PURGES_PER_SWEEP; i += 1) {
        const purged = await store.purgeExpired(clock.now(), PURGE_BATCH);
        total += purged;
        if (purged < PURGE_BATCH) break;
      }
      if (total > 0) logger.info({ purged: total }, 'expired resources deleted');
    } catch (error) {
      logger.warn({ err: error }, 'retention sweep failed; the next one retries');
    }
    return total;
  }

  /** Stops the timer and waits for a sweep under way. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
