/**
 * One driver run of a session in this process (`runtime.ts` decides when): it takes the
 * session's lease, readies the session (its pinned configuration, inference option and
 * provider, `session-configs.ts`), runs a `SessionDriver` until the session rests, and
 * releases the lease. A session that cannot run is parked: its due entry moves to when it
 * is worth a look again (a session without a usable inference option), or is dropped (a
 * session the directory forgot, or one without a pinned configuration).
 */
import { sessionLease } from '../storage/work-store.ts';
import { SessionDriver } from './driver.ts';
import type { Admission, DueStanding } from './due-standing.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { SessionRow, TurnRuntimeOptions } from './runtime-options.ts';
import { SessionConfigs } from './session-configs.ts';
import type { SessionState } from './session-state.ts';
import type { StateCache } from './state-cache.ts';
import type { TurnEnded } from './steps.ts';
import type { WakeCounter } from './wake-counter.ts';

/** When a session without a usable inference option is looked at again. */
const UNUSABLE_RETRY_MS = 60_000;
/** What a driver says of a session its log store holds no record of. */
const FOREIGN_LOG =
  'the session has no record in this log store: is this process on the log store the session was opened on? Looking again in a minute';
/** Sessions without a usable option remembered at most (a bound, not a cache policy). */
const UNUSABLE_REMEMBERED = 10_000;
/**
 * A driver's stay after its last work: long enough that a busy conversation's next
 * message finds it still there (no lease, entry or tail to set up again), short enough
 * that an idle process soon holds no lease and no state. A 10 s stay measured no faster
 * in `npm run bench:turns` (a thousand closed-loop conversations come back within 2 s)
 * and held about 50 MB more with 10,000 sessions just run. Its lease is renewed with all
 * the others of the process in one statement (`lease-keeper.ts`).
 */
export const DEFAULT_LINGER_MS = 2_000;

/** What a runner shares with the runtime that owns it. */
export interface DriverRunnerDeps {
  readonly options: TurnRuntimeOptions;
  /** The process's turn states, which status reads and archives share. */
  readonly states: StateCache;
  /** The process's leases, renewed together. */
  readonly leases: LeaseKeeper;
  readonly turnEnded: TurnEnded;
  /** The session's directory record (reads under way shared with the state's build). */
  readonly row: (session: string) => Promise<SessionRow>;
}

/** Runs the drivers of this process, one run per call of `drive`. */
export class DriverRunner {
  readonly #options: TurnRuntimeOptions;
  readonly #states: StateCache;
  readonly #leases: LeaseKeeper;
  readonly #turnEnded: TurnEnded;
  readonly #configs: SessionConfigs;
  readonly #row: (session: string) => Promise<SessionRow>;
  /** The drivers running here, for nudges. */
  readonly #running = new Map<string, SessionDriver>();
  /**
   * Sessions a driver here found without a usable inference option (a build without the
   * option's provider, such as a log-only deployment), until when they are looked at
   * again. Their messages are marked due for that time rather than now (`TurnRuntime.admit`)
   * and start no driver, so a busy session costs one driver start a minute instead of a
   * lease, a log read and a due update per message, and a log-only deployment's sweep does
   * not run a driver for every session written to each second.
   */
  readonly #unusable = new Map<string, number>();
  /**
   * The first uncounted record's `at` each state's last driver here knew, so the next
   * driver of the session need not read it (see `SessionDriver.run`); kept with the state
   * object, which a rebuild of the state replaces.
   */
  readonly #firstUncounted = new WeakMap<SessionState, number>();

  constructor(deps: DriverRunnerDeps) {
    this.#options = deps.options;
    this.#states = deps.states;
    this.#leases = deps.leases;
    this.#turnEnded = deps.turnEnded;
    this.#configs = new SessionConfigs(deps.options);
    this.#row = deps.row;
  }

  /**
   * Until when `session`, found without a usable option, is left alone (see `#unusable`);
   * undefined when it was not, or that time has passed (it is then forgotten and runs again).
   */
  unusableUntil(session: string): number | undefined {
    const until = this.#unusable.get(session);
    if (until === undefined) return undefined;
    if (until > this.#options.clock.now()) return until;
    this.#unusable.delete(session);
    return undefined;
  }

  /**
   * An admission on the due entry of `session` for a driving record about to land through
   * this process (`due-standing.ts`); null when a mark must be written instead: no driver
   * runs here, its entry is not known due, a settle is under way, or less than a third of
   * `LEASE_MS` of its lease is confirmed ahead. A record landing after that, or after the
   * lease was lost or given up (a driver stopped while the record was on its way), could
   * find the session taken up and settled by another process, so the admission then says
   * `lapsed` and the record is marked once it landed.
   */
  hold(session: string): Admission | null {
    const driver = this.#running.get(session);
    if (driver === undefined) return null;
    const name = sessionLease(session);
    const { clock, leaseMs } = this.#options;
    const margin = leaseMs / 3;
    // Lost, given up (a driver stopped while the record was on its way) or near its end.
    const lapsed = (): boolean => {
      const until = this.#leases.heldUntil(name);
      return until === null || until - clock.now() < margin;
    };
    if (lapsed()) return null;
    const release = driver.due.hold();
    return release === null ? null : { release, lapsed };
  }

  /** What the driver running `session` here knows of its due entry, if one runs. */
  standing(session: string): DueStanding | undefined {
    return this.#running.get(session)?.due;
  }

  /**
   * Tells the driver of `session` running here, if any, that a driving record landed:
   * through this process (`local`), or elsewhere (see `SessionDriver.nudge`).
   */
  nudge(session: string, local: boolean): void {
    this.#running.get(session)?.nudge(local);
  }

  /** Drives `session` under its lease; answers the stamp it settled, undefined without the lease. */
  async drive(session: string, wakes: WakeCounter): Promise<number | null | undefined> {
    const name = sessionLease(session);
    const lease = await this.#leases.take(name);
    if (lease === null) return undefined;
    try {
      return await this.#run(session, wakes, lease.signal);
    } finally {
      await this.#leases.release(name, lease);
    }
  }

  async #run(session: string, wakes: WakeCounter, signal: AbortSignal): Promise<number | null> {
    const { clock, logger } = this.#options;
    const [row, state] = await Promise.all([this.#row(session), this.#states.get(session)]);
    // A session the directory forgot (its install was deleted) has nothing left to drive.
    if (row === null || state === null) return this.#park(session, null);
    const ready = await this.#configs.forDriver(row.value, async () => {
      // Every wake counted so far is in this read; a later one is `missed` unless the
      // driver reads again (see `WakeCounter`).
      wakes.look();
      await state.catchUp(this.#options.log);
      return state;
    });
    if (ready === 'no_option') {
      // The option was deleted or names a provider this build lacks: look again later
      // (PUT /inferences: installs follow a replaced option) rather than at every sweep.
      logger.warn({ session }, 'the session has no usable inference option; retrying in a minute');
      if (this.#unusable.size >= UNUSABLE_REMEMBERED) this.#unusable.clear();
      this.#unusable.set(session, clock.now() + UNUSABLE_RETRY_MS);
      return this.#park(session, clock.now() + UNUSABLE_RETRY_MS);
    }
    if (ready === 'no_configuration') {
      logger.warn({ session }, 'the session has no pinned configuration');
      return this.#park(session, null);
    }
    if (state.head === 0) {
      // The directory files a session only once `session.opened` landed, so a log without
      // it is not the log the session was opened on: a process on another log store that
      // shares this work store, or a log that was lost. Nothing is driven or archived on
      // it (its last record's time, 0, would make it idle for ages); it is said loudly and
      // looked at again later, which leaves the session to a process on the right log.
      logger.error({ session }, FOREIGN_LOG);
      return this.#park(session, clock.now() + UNUSABLE_RETRY_MS);
    }
    const driver = new SessionDriver(
      {
        log: this.#options.log,
        work: this.#options.work,
        clock,
        idleArchiveMs: this.#options.idleArchiveMs,
        lingerMs: this.#options.lingerMs ?? DEFAULT_LINGER_MS,
        wakes,
        archiveIdle: () => this.#options.archiveIdle(row.value),
        signGate: (claims) => this.#options.signGate(claims),
        callTool: (request) => this.#options.callTool(request),
        turnEnded: this.#turnEnded,
      },
      ready,
      signal,
    );
    this.#running.set(session, driver);
    try {
      return await driver.run(this.#firstUncounted.get(state));
    } finally {
      const first = driver.firstUncounted;
      if (first === null) this.#firstUncounted.delete(state);
      else this.#firstUncounted.set(state, first);
      this.#running.delete(session);
      // An ended session has nothing left to drive: its state is not kept for a next turn.
      if (state.phase === 'ended') this.#states.drop(session);
    }
  }

  /** Moves the session's due entry to `next` (null: drops it); answers the stamp it settled. */
  async #park(session: string, next: number | null): Promise<number | null> {
    const stamp = (await this.#options.work.dueEntry(session))?.stamp ?? 0;
    return (await this.#options.work.settleDue(session, stamp, next)) ? stamp : null;
  }
}
