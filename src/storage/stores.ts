/** The stores a process opens (`open.ts`), and what it opens them from. */
import type { Clock } from '../clock.ts';
import type { ControlStore } from './control-store.ts';
import type { LogStore } from './log-store.ts';
import type { LogClient } from './redis/scripts.ts';
import type { SecretsKeyring } from './secret-box.ts';
import type { WorkStore } from './work-store.ts';

export interface StoreOptions {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** The keys that seal secrets at rest: the current one seals, every one opens. */
  readonly secretsKey: Buffer | SecretsKeyring;
  readonly clock: Clock;
  /** Hears failures a store recovers from by itself (a lost Redis reader connection). */
  readonly onError?: (error: unknown) => void;
}

export interface Stores {
  readonly log: LogStore;
  readonly control: ControlStore;
  readonly work: WorkStore;
  /**
   * A command connection to the log's Redis, when `REDIS_URL` is set, that the rate limits
   * count through (`src/http/rate-limit.ts`): its own, with a short deadline, so a Redis
   * that went silent costs a request at most about `RATE_LIMIT_COMMAND_MS` (it then passes
   * uncounted) before its own store command meets the outage, not a whole command
   * deadline more. Closed with the stores.
   */
  readonly redis?: LogClient;
  /** Closes the log store (ending its tails), then the control and work stores. */
  close(): Promise<void>;
}
