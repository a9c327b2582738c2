/**
 * What an operator scrapes from `GET /metrics`: one prom-client
 * registry per process (not the library's global one, so two apps in one test process
 * keep their counts apart) and the instruments the code paths feed.
 *
 * Cheap on the hot path: every label value is known when the process starts (the log
 * store's backend, a tail's transport, a turn's end reason, a store error's code), so
 * each instrument's label children are bound once here and a request only increments or
 * observes one; nothing is built from request data. No label names a tenant, an install,
 * a session or a user: the counts are the process's, never a customer's. What is alive
 * now (actors, drivers) is read when the registry is scraped, not kept up by the code.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CodeOf } from '../error-codes.ts';
import { isServiceError } from '../errors.ts';
import type { TurnEndReason } from '../machines/turn.types.ts';

/** How a tail is read (interface 4.2). */
type TailTransport = 'ndjson' | 'websocket';

const TRANSPORTS: readonly TailTransport[] = ['ndjson', 'websocket'];
const TURN_END_REASONS: readonly TurnEndReason[] = [
  'completed',
  'cancelled',
  'rounds_exhausted',
  'failed',
  'archived',
];
/** The codes of `Unavailable` errors the stores throw. */
const STORE_ERROR_CODES = [
  'store_unavailable',
  'store_busy',
  'store_closed',
] as const satisfies readonly CodeOf<503>[];
type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

/** Seconds; an append is a few milliseconds on a healthy store. */
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Seconds; a turn is one model answer or many rounds of tool calls. */
const TURN_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Metric names begin with this. */
const METRIC_PREFIX = 'agent_sessions_';

export interface ServiceMetricsOptions {
  /** The log store's backend (`sqlite`, `postgres`, `redis`): the `backend` label. */
  readonly backend: string;
  /**
   * Also the process's own metrics (prom-client's defaults: CPU, memory, heap, event-loop
   * delay, handles, GC). The service turns them on; tests that build many apps leave them
   * off, since each set keeps an event-loop monitor running.
   */
  readonly processMetrics?: boolean;
  /** Actors held in memory now, by actor type (read at scrape time). */
  readonly liveActors: () => Readonly<Record<string, number>>;
  /** Turn drivers running in this process now (read at scrape time). */
  readonly liveDrivers: () => number;
  /** Sessions whose turn machine actor this process holds in memory now. */
  readonly liveSessionStates: () => number;
}

/** The instruments of one process and the registry they are scraped from. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #appendsLanded: Counter.Internal;
  readonly #appendsReplayed: Counter.Internal;
  readonly #records: Counter.Internal;
  readonly #appendSeconds: Histogram.Internal<string>;
  readonly #tails: Readonly<Record<TailTransport, Gauge.Internal<string>>>;
  readonly #turns: Readonly<Record<TurnEndReason, Counter.Internal>>;
  readonly #turnSeconds: Readonly<Record<TurnEndReason, Histogram.Internal<string>>>;
  readonly #storeErrors: Readonly<Record<StoreErrorCode, Counter.Internal>>;
  readonly #admitted: Readonly<Record<'marked' | 'held', Counter.Internal>>;

  constructor(options: ServiceMetricsOptions) {
    const registers = [this.registry];
    const name = (suffix: string) => `${METRIC_PREFIX}${suffix}`;
    const appends = new Counter({
      name: name('appends_total'),
      help: 'Append requests answered 200, by log backend and whether the batch landed or replayed an earlier one.',
      labelNames: ['backend', 'outcome'],
      registers,
    });
    // Every child is made and zeroed now, so a scrape shows every series from the start.
    this.#appendsLanded = zeroed(appends.labels(options.backend, 'landed'));
    this.#appendsReplayed = zeroed(appends.labels(options.backend, 'replayed'));
    this.#records = new Counter({
      name: name('records_appended_total'),
      help: 'Records landed through the append route, by log backend.',
      labelNames: ['backend'],
      registers,
    }).labels(options.backend);
    this.#records.inc(0);
    const appendSeconds = new Histogram({
      name: name('append_duration_seconds'),
      help: 'From receiving an append request to its records landed, for appends answered 200, by log backend.',
      labelNames: ['backend'],
      buckets: APPEND_BUCKETS,
      registers,
    });
    appendSeconds.zero({ backend: options.backend });
    this.#appendSeconds = appendSeconds.labels(options.backend);
    const tails = new Gauge({
      name: name('tails_live'),
      help: 'Session tails open now, by transport.',
      labelNames: ['transport'],
      registers,
    });
    this.#tails = bind(TRANSPORTS, (transport) => zeroed(tails.labels(transport)));
    const turns = new Counter({
      name: name('turns_total'),
      help: 'Turns this process ended, by the reason their turn.ended names.',
      labelNames: ['outcome'],
      registers,
    });
    this.#turns = bind(TURN_END_REASONS, (reason) => zeroed(turns.labels(reason)));
    const turnSeconds = new Histogram({
      name: name('turn_duration_seconds'),
      help: 'From turn.started to turn.ended (the records’ own times), by outcome; turns whose start this process did not see are counted in turns_total only.',
      labelNames: ['outcome'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.#turnSeconds = bind(TURN_END_REASONS, (outcome) => {
      turnSeconds.zero({ outcome });
      return turnSeconds.labels(outcome);
    });
    const admitted = new Counter({
      name: name('driving_appends_total'),
      help: "Appends of records that drive turns (a message, a cancel, a tool call's completion), by how their session was kept due for them: `marked` (a due mark written first) or `held` (admitted on the due entry of the session's driver in this process, no mark needed).",
      labelNames: ['due'],
      registers,
    });
    this.#admitted = bind(['marked', 'held'] as const, (due) => zeroed(admitted.labels(due)));
    const storeErrors = new Counter({
      name: name('store_errors_total'),
      help: 'Store failures a request or a tail met (answered 503, or ended the tail), by error code.',
      labelNames: ['code'],
      registers,
    });
    this.#storeErrors = bind(STORE_ERROR_CODES, (code) => zeroed(storeErrors.labels(code)));
    new Gauge({
      name: name('actors_live'),
      help: 'Virtual actors of the control plane held in memory now, by actor type (session, proposal, connection, claim); a type none of which is held is not listed.',
      labelNames: ['type'],
      registers,
      collect() {
        this.reset();
        for (const [type, count] of Object.entries(options.liveActors())) {
          this.labels(type).set(count);
        }
      },
    });
    new Gauge({
      name: name('turn_drivers_live'),
      help: 'Turn drivers running in this process now (one per session whose lease it holds).',
      registers,
      collect() {
        this.set(options.liveDrivers());
      },
    });
    new Gauge({
      name: name('session_states_live'),
      help: "Sessions whose turn state (the turn machine's actor, caught up with the log) this process holds in memory now.",
      registers,
      collect() {
        this.set(options.liveSessionStates());
      },
    });
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  /** An append answered 200 after `seconds`: `landed` minted `records` records. */
  appended(outcome: 'landed' | 'replayed', records: number, seconds: number): void {
    if (outcome === 'landed') {
      this.#appendsLanded.inc();
      this.#records.inc(records);
    } else {
      this.#appendsReplayed.inc();
    }
    this.#appendSeconds.observe(seconds);
  }

  /** A tail began streaming; `tailClosed` with the same transport when it ends. */
  tailOpened(transport: TailTransport): void {
    this.#tails[transport].inc();
  }

  tailClosed(transport: TailTransport): void {
    this.#tails[transport].dec();
  }

  /** This process landed a `turn.ended`; `seconds` since its `turn.started` when known. */
  turnEnded(reason: TurnEndReason, seconds: number | null): void {
    this.#turns[reason].inc();
    if (seconds !== null) this.#turnSeconds[reason].observe(seconds);
  }

  /** A driving record was admitted, its session `marked` due or `held` (`TurnRuntime.admit`). */
  admitted(how: 'marked' | 'held'): void {
    this.#admitted[how].inc();
  }

  /** Counts `error` when it is a store's failure (`Unavailable` with a `store_` code). */
  storeFailed(error: unknown): void {
    if (isServiceError(error) && error.status === 503) {
      const counter = (this.#storeErrors as Readonly<Record<string, Counter.Internal>>)[error.code];
      counter?.inc();
    }
  }

  /** The registry in the Prometheus text format, and its media type. */
  async scrape(): Promise<{ readonly text: string; readonly contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/** `child`, with its series at 0 (a child is only listed once it was touched). */
function zeroed<C extends { inc(value?: number): void }>(child: C): C {
  child.inc(0);
  return child;
}

/** One bound child per label value. */
function bind<K extends string, V>(keys: readonly K[], make: (key: K) => V): Record<K, V> {
  return Object.fromEntries(keys.map((key) => [key, make(key)])) as Record<K, V>;
}
