/**
 * The turn runtime of one process (decisions part C): who drives which session, when, and
 * the turn state every reader shares.
 *
 * One driver per session across processes. A driver runs only while its process holds the
 * session's lease in the work store (`LEASE_MS`, renewed at a third of it while it works);
 * a process that dies stops renewing, and once the lease lapses any process may take over.
 *
 * Finding work. An append that lands a driving kind (`message.submitted`, `turn.cancel`,
 * `invoke.completed`) marks the session due before it lands, so an acknowledged record is
 * never left without a driver even if the process dies right after, and wakes the driver
 * once it landed (`landed`). The marks are durable, and the periodic sweep (`SWEEP_MS`,
 * and once at start-up) drives every session whose entry is due and whose lease is free:
 * a turn cut by kill -9 resumes on restart or elsewhere. Timers (retry backoff,
 * deadlines, idle archive, usage checkpoints) are due entries too.
 *
 * A driver stays a while after its last work (`lingerMs`), lease held, so the next
 * message of a conversation finds it there. A wake that came after its last read of the
 * log (`WakeCounter`), or a mark from another process that could not take the lease,
 * starts the next driver as soon as it has left, instead of at the next sweep.
 *
 * A driver's run itself (its lease, the session's configuration, parking a session that
 * cannot run) is `driver-runner.ts`; this file decides when one runs.
 */
import { randomUUID } from 'node:crypto';
import { tenantSealKey } from '../sessions/sealing.ts';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { DriverRunner } from './driver-runner.ts';
import { DueMarks } from './due-marks.ts';
import { MARKED, type Admission } from './due-standing.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import type { SessionState } from './session-state.ts';
import { restoreState } from './state-snapshot.ts';
import { landEnded, type TurnEnded } from './steps.ts';
import { StateCache } from './state-cache.ts';
import { WakeCounter } from './wake-counter.ts';
import type { SessionRow, TurnRuntimeOptions } from './runtime-options.ts';

/** Sessions the sweep takes per pass. */
const SWEEP_BATCH = 200;
/** Drives the turns of the sessions this process holds leases for. */
export class TurnRuntime {
  readonly #options: TurnRuntimeOptions;
  /** This process's lease holder name. */
  readonly holder = `turns:${randomUUID()}`;
  readonly #drivers = new Map<string, Promise<void>>();
  /** The wakes of each session whose driver runs here (see `WakeCounter`). */
  readonly #wakes = new Map<string, WakeCounter>();
  readonly #states: StateCache;
  readonly #leases: LeaseKeeper;
  readonly #runner: DriverRunner;
  readonly #marks: DueMarks;
  readonly #closing = new AbortController();
  readonly #turnEnded: TurnEnded;
  /** Directory reads under way, by session (`#row`). */
  readonly #rows = new Map<string, Promise<SessionRow>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: TurnRuntimeOptions) {
    this.#options = options;
    this.#turnEnded = options.turnEnded ?? (() => undefined);
    this.#states = new StateCache({
      build: (id) => this.#newState(id),
      now: () => options.clock.now(),
      busy: (id) => this.#drivers.has(id),
      idleMs: options.stateIdleMs,
    });
    this.#marks = new DueMarks(options.work);
    this.#leases = new LeaseKeeper(options.work, this.holder, options.clock, options.leaseMs);
    this.#runner = new DriverRunner({
      options,
      states: this.#states,
      leases: this.#leases,
      turnEnded: this.#turnEnded,
      row: (session) => this.#row(session),
    });
  }

  /** Starts the sweep: once now (sessions left unfinished by a crash), then every `sweepMs`. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.sweep(), this.#options.sweepMs);
    this.#timer.unref();
    void this.sweep();
  }

  /**
   * Before a driving record of `session` lands through this process: makes sure the
   * record is driven even if the process dies once it landed. The session is marked due,
   * durably; or, when the driver here holds the session and its entry is known due, the
   * record is admitted on that entry (`due-standing.ts`), a work-store round trip less on
   * each append of a busy session. The caller releases the admission once the append
   * landed or failed, and calls `landed` with it after a landing.
   */
  async admit(session: string): Promise<Admission> {
    const held = this.#runner.hold(session);
    this.#options.admitted?.(held === null ? 'marked' : 'held');
    if (held !== null) return held;
    // A session left alone for want of a usable option is due when it is looked at again.
    await this.mark(session, this.#runner.unusableUntil(session));
    return MARKED;
  }

  /**
   * Marks `session` due now (or `at`), durably. A driver running here whose entry this
   * leaves due (it did not settle meanwhile) knows so from here on (`DueStanding.marked`).
   */
  async mark(session: string, at = this.#options.clock.now()): Promise<void> {
    const standing = this.#runner.standing(session);
    const settles = standing?.settles;
    await this.#marks.mark(session, at);
    if (settles !== undefined) standing?.marked(settles);
  }

  /**
   * A driving record of `session` landed through this process (after `admit`): wakes the
   * driver here, or starts one. When another process holds the lease, its driver may have
   * read the due entry's stamp before the record landed and be about to settle with it, so
   * the entry is marked again (that settle then fails and the driver looks again; one that
   * reads the stamp later sees the record in the catch-up that follows its read), and the
   * lease is tried once more in case that driver has just left. `admission`, released
   * already, says whether the record must be marked after all.
   */
  async landed(session: string, admission: Admission = MARKED): Promise<void> {
    if (admission.lapsed()) await this.mark(session);
    // A session found without a usable option waits for the sweep, which its mark has
    // made it due for, rather than costing a driver start per message.
    if (this.#runner.unusableUntil(session) !== undefined) return;
    this.#start(session, true);
  }

  /**
   * Row 61: a session about to open is due when its idle archive would be, durably, so a
   * session no one ever writes to is archived too. (A session that never opens is found
   * gone by its driver, which drops the entry.)
   */
  async opening(session: string): Promise<void> {
    const { work, clock, idleArchiveMs } = this.#options;
    await work.markDue(session, clock.now() + idleArchiveMs);
  }

  /** Starts a driver for `session` here, or wakes the one that runs here already. */
  kick(session: string): void {
    this.#start(session, false);
  }

  #start(session: string, landed: boolean): void {
    if (this.#closing.signal.aborted) return;
    const wakes = this.#wakes.get(session);
    if (wakes !== undefined) {
      wakes.wake();
      this.#runner.nudge(session, landed);
      return;
    }
    const counter = new WakeCounter();
    this.#wakes.set(session, counter);
    // A driver outlives the request that woke it: no part of the request's trace.
    this.#drivers.set(
      session,
      context.with(ROOT_CONTEXT, () => this.#driveOnce(session, counter, landed)),
    );
  }

  /**
   * One driver of `session`, then the checks for a wake it missed. A kick that came after
   * the driver's last read of the log (its counter says so) starts the next driver at
   * once. A mark from another process that could not take the lease may also have come
   * after that read: an entry due now under a stamp the driver did not settle is driven
   * at once too, instead of at the next sweep.
   */
  async #driveOnce(session: string, wakes: WakeCounter, landed: boolean): Promise<void> {
    let settled: number | null | undefined;
    try {
      settled = await this.#runner.drive(session, wakes);
    } catch (error) {
      this.#options.logger.warn({ err: error, session }, 'turn driver failed; the sweep retries');
    } finally {
      this.#drivers.delete(session);
      this.#wakes.delete(session);
    }
    if (this.#closing.signal.aborted) return;
    if (settled === undefined) {
      // Another process holds the lease (or the driver failed: the sweep retries it).
      if (!landed) return;
      await this.mark(session).catch(() => undefined);
      this.kick(session);
      return;
    }
    if (wakes.missed) {
      this.kick(session);
      return;
    }
    const { work, clock } = this.#options;
    const entry = await work.dueEntry(session).catch(() => null);
    if (entry !== null && entry.stamp !== settled && entry.at <= clock.now()) this.kick(session);
  }

  /** Drives every due session whose lease is free. */
  async sweep(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    try {
      const due = await this.#options.work.due(this.#options.clock.now(), SWEEP_BATCH);
      for (const session of due) this.kick(session);
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'turn sweep failed');
    }
  }

  /** The session's turn state, caught up with its log (status, archive). */
  async state(session: string): Promise<SessionState | null> {
    const state = await this.#states.get(session);
    if (state !== null) await state.catchUp(this.#options.log);
    return state;
  }

  /**
   * Row 60: ends the turn in flight of a session being archived with `turn.ended
   * archived`, before the archive lands `session.archived`. Under the turn's `end` key, so
   * a driver ending the same turn meanwhile lands one `turn.ended` between them; after it
   * the chart starts no turn (`closing`) until `session.archived` lands. The session is
   * marked due first, so the checkpoint its archive owes (row 53) is never lost; the
   * lifecycle kicks its driver once the archive landed.
   */
  async endForArchive(session: string): Promise<void> {
    // Due now, durably, before the archive lands: its final usage checkpoint is owed.
    await this.mark(session);
    const state = await this.state(session);
    const turn = state?.context.turn ?? null;
    if (state === null || turn === null || state.phase === 'ended') return;
    const turnEnded = this.#turnEnded;
    await landEnded({ log: this.#options.log, state, turnEnded }, turn, 'archived', null);
  }

  /** Row 53: the session's archive landed; its driver counts the last records now. */
  archived(session: string): void {
    void this.landed(session);
  }

  /** Drivers running in this process now. */
  get driving(): number {
    return this.#drivers.size;
  }

  /** Sessions whose turn state (each a turn machine actor) this process holds now. */
  get statesHeld(): number {
    return this.#states.size;
  }

  /** Stops every driver here (their leases lapse or are released) and the sweep. */
  async close(): Promise<void> {
    this.#closing.abort();
    this.#leases.abortAll();
    clearInterval(this.#timer);
    await Promise.allSettled([...this.#drivers.values()]);
  }

  /**
   * The session's directory record; a read already under way is shared. A driver's start
   * reads it and the session's state at once, and building the state reads it too: one
   * statement instead of two.
   */
  #row(session: string): Promise<SessionRow> {
    let row = this.#rows.get(session);
    if (row === undefined) {
      row = this.#options.directory.get(session);
      this.#rows.set(session, row);
      const forget = (): void => {
        this.#rows.delete(session);
      };
      row.then(forget, forget);
    }
    return row;
  }

  async #newState(session: string): Promise<SessionState | null> {
    const row = await this.#row(session);
    if (row === null) return null;
    const tenantKey = tenantSealKey(this.#options.sealKey, row.value.tenant);
    return restoreState(this.#options.work, session, tenantKey);
  }
}
