/**
 * One session's driver: while its process holds the session's lease, it follows the log,
 * asks the planner what to do next (`plan.ts`) and does it (`steps.ts`), until the session
 * rests (idle with nothing due, or archived and counted). Decisions part C, rows 50, 51,
 * 53, 60, 61, 90.
 *
 * Durable timers. A wait (a retry's backoff) and a rest (the idle archive, the next usage
 * checkpoint) are written to the work store's due index before the driver sleeps or
 * leaves, so a crash loses no timer: whoever finds the entry due (this process's sweep
 * after a restart, or another process) replays the log and reaches the same plan. The
 * entry is settled only if no wake came in since it was read (its stamp), so a message
 * that arrives while the driver decides to rest is never missed.
 *
 * Records reach the state two ways: a tail that follows the log (so a `turn.cancel` landed
 * by any process aborts the inference in flight at once) and the answer of each landing
 * (so the planner always sees what it just landed), or a catch-up read where neither
 * serves. The state applies each record once, whichever way it comes first. The tail
 * takes what lands while it waits synchronously (`TailOptions.deliver`), and every backend
 * hands its own process's appends to its tails before answering: a message appended here
 * is in the state before its wake reaches the driver, which need not read (`nudge`).
 */
import type { StoredRecord } from '../storage/log-store.ts';
import type { DriverDeps, DriverSession } from './driver-deps.ts';
import { DueStanding } from './due-standing.ts';
import { planFor } from './driver-plan.ts';
import type { Step } from './plan.ts';
import { authorize, expire, perform } from './call-steps.ts';
import { infer, landOwed, requestCompaction, summarize, type StepContext } from './steps.ts';
import { SAVE_AT_REST, SAVE_WHILE_ACTIVE, saveState } from './state-snapshot.ts';
import { checkpointOnce, firstUncountedAt, type CheckpointTarget } from './usage.ts';

/** The longest single timer of a sleep; a longer one is slept in pieces by the loop. */
const MAX_NAP_MS = 2 ** 31 - 1;

/** The steps the driver may settle its due entry on. */
type Resting = Extract<Step, { readonly type: 'rest' | 'wait' }>;

/** Drives one session until it rests; answers the due-entry stamp it settled last. */
export class SessionDriver {
  readonly #deps: DriverDeps;
  readonly #session: DriverSession;
  readonly #signal: AbortSignal;
  readonly #steps: StepContext;
  readonly #usage: CheckpointTarget;
  /** `at` of the first record not yet counted in usage, once known. */
  #firstUncounted: number | null = null;
  /** Set by a nudge: the log may hold what the state has not seen. */
  #stale = false;
  /** True while the follow tail runs (records landed here reach the state through it). */
  #following = false;
  /** Ends the current sleep, while one runs. */
  #wake: (() => void) | null = null;
  /** What the driver knows of its due entry, and the holds on it (`TurnRuntime.admit`). */
  readonly due = new DueStanding(() => this.#wake?.());

  constructor(deps: DriverDeps, session: DriverSession, signal: AbortSignal) {
    this.#deps = deps;
    this.#session = session;
    this.#signal = signal;
    this.#steps = {
      log: deps.log,
      state: session.state,
      option: session.option,
      provider: session.provider,
      tenantKey: session.tenantKey,
      signal,
      authorizer: session.authorizer,
      signGate: (claims) => deps.signGate(claims),
      clock: deps.clock,
      callTool: (request) => deps.callTool(request),
      tenant: session.tenant,
      turnEnded: deps.turnEnded,
    };
    this.#usage = {
      log: deps.log,
      work: deps.work,
      session: session.state.session,
      tenant: session.tenant,
      model: session.provider.key,
    };
  }

  /** Runs (on a state the runner caught up) until the session rests; answers the stamp settled. */
  async run(firstUncounted?: number): Promise<number | null> {
    const { state } = this.#session;
    // The tail ends with the driver, whether it rests or is stopped; a stop ends a sleep.
    const following = new AbortController();
    const stop = (): void => {
      following.abort();
      this.#wake?.();
    };
    this.#signal.addEventListener('abort', stop, { once: true });
    const follow = this.#follow(following.signal);
    const stopCounting = state.listen((record) => {
      this.#firstUncounted ??= record.envelope.at;
    });
    try {
      // A first uncounted record known from an earlier run here stays valid: counted usage
      // only moves on, so the true one is that record or a later one, and a checkpoint
      // due too early reads where the store stands and changes nothing.
      this.#firstUncounted = firstUncounted ?? (await firstUncountedAt(this.#usage));
      return await this.#loop();
    } finally {
      stopCounting();
      following.abort();
      this.#signal.removeEventListener('abort', stop);
      await follow;
    }
  }

  async #loop(): Promise<number | null> {
    const { state } = this.#session;
    const { work, clock, lingerMs } = this.#deps;
    // The driver lingers this long after its last work before it settles and leaves.
    let lingerUntil = clock.now() + lingerMs;
    for (;;) {
      if (this.#signal.aborted) {
        // Stopped (shutdown, or the lease lost): what it replayed is saved for whoever
        // takes the session up; a save is a cache of the log, so a second writer is fine.
        if (state.head - state.savedAt >= SAVE_AT_REST) await this.#save();
        return null;
      }
      if (this.#stale) await this.#catchUp();
      const step = this.#plan(clock.now());
      if (step.type !== 'rest' && step.type !== 'wait') {
        await this.#do(step);
        lingerUntil = clock.now() + lingerMs;
        if (state.head - state.savedAt >= SAVE_WHILE_ACTIVE) await this.#save();
        continue;
      }
      if (clock.now() < lingerUntil || this.due.held) {
        // Resting with the lease still held: a record applied (the follow tail) or a
        // nudge (a wake marked here) ends the nap, so the next message of a busy session
        // costs no lease, no due-entry round trip and no new tail. The entry stays due
        // meanwhile: a crash here leaves it for the sweep, which replays to this plan.
        // While a record admitted on that entry is on its way (a hold), the driver waits
        // for it rather than settle (`due-standing.ts`); the hold's release wakes it.
        const wake = Math.min(step.until ?? Infinity, this.due.held ? Infinity : lingerUntil);
        await this.#sleep(Number.isFinite(wake) ? wake : null);
        continue;
      }
      const settled = await this.#settle();
      if (settled === null) continue;
      if (settled.type === 'rest') {
        if (settled.until === null && state.phase === 'ended') {
          await work.dropTurnState(state.session).catch(() => undefined);
        } else if (state.head - state.savedAt >= SAVE_AT_REST) await this.#save();
        return settled.stamp;
      }
      await this.#sleep(settled.until);
      lingerUntil = clock.now() + lingerMs;
    }
  }

  /**
   * Settles the due entry for good: to the plan's next time, or away. The stamp is read
   * before the last look at the log: a wake marked after this read fails the settle, and
   * one marked before it is in the catch-up, so a message that lands while the driver
   * decides is never missed. Answers null, changing nothing, when that look finds work
   * or the settle failed; else the plan it settled for, with the stamp.
   */
  async #settle(): Promise<(Resting & { readonly stamp: number }) | null> {
    const { state } = this.#session;
    const { work, clock } = this.#deps;
    this.due.beginSettle();
    let moved = false;
    try {
      const stamp = (await work.dueEntry(state.session))?.stamp ?? 0;
      await this.#catchUp();
      const last = this.#plan(clock.now());
      if (last.type !== 'rest' && last.type !== 'wait') return null;
      if (!(await work.settleDue(state.session, stamp, last.until))) {
        this.#stale = true;
        return null;
      }
      moved = true;
      return { ...last, stamp };
    } finally {
      this.due.endSettle(moved);
    }
  }

  /** Reads the log into the state; a nudge or wake from here on calls for another read. */
  async #catchUp(): Promise<void> {
    this.#stale = false;
    this.#deps.wakes.look();
    await this.#session.state.catchUp(this.#deps.log);
  }

  /** Saves the state for the next taking-up; a failed save costs only replay time later. */
  async #save(): Promise<void> {
    const { state, tenantKey } = this.#session;
    await saveState(this.#deps.work, state, tenantKey).catch(() => undefined);
  }

  /** The first uncounted record's `at` as the driver last knew it (null: none). */
  get firstUncounted(): number | null {
    return this.#firstUncounted;
  }

  /**
   * A wake for this session: read the log and replan. A driving record appended through
   * this process (`local`) is in the state already, or on its way through the follow
   * tail, whose delivery wakes the driver: no read is needed while the tail runs. (The
   * settle reads the log anyway before the driver leaves, so nothing is missed.)
   */
  nudge(local: boolean): void {
    if (local && this.#following) return;
    this.#stale = true;
    this.#wake?.();
  }

  #plan(now: number): Step {
    const { idleArchiveMs } = this.#deps;
    return planFor(this.#session, { idleArchiveMs, firstUncounted: this.#firstUncounted, now });
  }

  async #do(step: Exclude<Step, { type: 'rest' | 'wait' }>): Promise<void> {
    const ctx = this.#steps;
    switch (step.type) {
      case 'checkpoint':
        this.#firstUncounted = await checkpointOnce(
          this.#usage,
          this.#deps.clock.now(),
          this.#session.state.phase === 'ended',
        );
        return;
      case 'land':
        return landOwed(ctx, step.owed);
      case 'infer':
        return infer(ctx);
      case 'compact': {
        const { state, provider } = this.#session;
        const tokens = provider.promptTokens(state.basics.instructions, state.transcript.prompt());
        return requestCompaction(ctx, tokens, step.through);
      }
      case 'summarize':
        return summarize(ctx, step.requested);
      case 'authorize':
        return authorize(ctx, step.call, step.tool);
      case 'expire':
        return expire(ctx, step.cause);
      case 'perform':
        return perform(ctx, step);
      case 'archive':
        await this.#deps.archiveIdle();
        await this.#catchUp();
        return;
    }
  }

  /** Follows the log into the state until the driver stops. */
  async #follow(signal: AbortSignal): Promise<void> {
    const { state } = this.#session;
    // Applied as it lands while the tail waits (`apply` skips what the state holds).
    const deliver = (record: StoredRecord): boolean => {
      if (record.envelope.cursor > state.head + 1) return false;
      state.apply(record);
      return true;
    };
    this.#following = true;
    try {
      for await (const record of this.#deps.log.tail(state.session, {
        from: state.head + 1,
        signal,
        deliver,
      })) {
        if (record.envelope.cursor > state.head + 1) await state.catchUp(this.#deps.log);
        else state.apply(record);
      }
    } catch {
      // The loop's own catch-up reads keep the state current without the tail.
    } finally {
      this.#following = false;
    }
  }

  /** Sleeps until `until` (null: no time), or until a record lands, a nudge or a stop. */
  #sleep(until: number | null): Promise<void> {
    const { state } = this.#session;
    if (this.#stale || this.#signal.aborted) return Promise.resolve();
    // A stop wakes it through `#wake` (`run`'s one abort listener), not a listener per nap.
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        stop();
        this.#wake = null;
        resolve();
      };
      const ms = until === null ? MAX_NAP_MS : Math.max(0, until - this.#deps.clock.now());
      const timer = setTimeout(done, Math.min(ms, MAX_NAP_MS));
      const stop = state.listen(done);
      this.#wake = done;
    });
  }
}
