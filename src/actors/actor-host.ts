/**
 * The virtual actor host (STYLE "src/actors"): actors driven by commands, addressed by
 * (type, id), activated on demand from their persisted snapshot and passivated when idle.
 * It starts and sends to its actors through `activation.ts`, as the turn's log actor does
 * (`log-actor.ts`); what is its own is the command loop below and the control store.
 *
 * A command to an actor goes through its id's mailbox, so one actor handles one command
 * at a time. Delivering a command:
 *
 * 1. Read the stored snapshot and its version (or the type's own `StateStore`). A cached
 *    actor at that version is reused; otherwise (first use, passivated, another process
 *    moved it on, or a type whose state is a resource of its own) the actor is restored
 *    from the snapshot, or started fresh at version 0 when none is stored. A command sent
 *    with `expect` is refused (`version_conflict`) once the version is another.
 * 2. Stamp `now` from the injected clock on the command and send it.
 * 3. Wait until the actor settles (`settled.ts`): no invoked child still running, so the
 *    machine has come to rest on its own answers, then every effect handed to its
 *    `EffectSink` fulfilled.
 * 4. Save the persisted snapshot expecting the version read in 1. The store's check makes
 *    the race between processes safe: of two commits from one version, one fails with
 *    `Conflict('version_conflict')`; the loser drops its actor, reads the fresh state and
 *    runs the command again, up to `attempts` times, then answers a `Conflict`.
 * 5. Answer through the actor type's `answer`.
 *
 * A failed effect, an actor that errors, or a store failure drops the actor without
 * committing and surfaces as a `ServiceError` (the original one if it is already one).
 * Machines run on an inert XState clock: delayed transitions never fire in the host, and
 * time reaches machines only as `now` on commands. Invoked actors do run: their answers
 * are events the machine takes while the command waits in step 3.
 */
import type { AnyStateMachine, EmittedFrom, EventFromLogic, SnapshotFrom } from 'xstate';
import type { Clock } from '../clock.ts';
import { Conflict, Unavailable } from '../errors.ts';
import type { ControlStore, SnapshotRecord } from '../storage/control-store.ts';
import { activate, failed, take, type Activation } from './activation.ts';
import type { ActorType, CommandOf } from './actor-type.ts';
import { Mailboxes } from './mailbox.ts';
import { failure, rested, settle } from './settled.ts';

export interface ActorHostOptions {
  readonly store: ControlStore;
  /** Stamps `now` on commands and times idleness. */
  readonly clock: Clock;
  /** An actor unused this long (ms, by `clock`) is passivated by `sweep()`; default 60 000. */
  readonly idleMs?: number;
  /** Calls `sweep()` this often (ms) on a real, unref'd timer; default: never, call it yourself. */
  readonly sweepEveryMs?: number;
  /** Attempts of a command whose commit keeps losing the version race; default 5. */
  readonly attempts?: number;
}

/** How one command is delivered. */
export interface SendOptions {
  /**
   * The version the caller decided on (0: none stored): the command is refused with
   * `Conflict('version_conflict')` when the actor's state is at another, and so is a
   * retry after a lost race, where the state moved on by definition.
   */
  readonly expect?: number;
}

/** Counters since the host started, for metrics and tests. */
export interface ActorHostStats {
  /** Actors held in memory now, and how many of them of each type. */
  readonly active: number;
  readonly activeByType: Readonly<Record<string, number>>;
  /** Actors created or restored from a snapshot. */
  readonly activations: number;
  /** Snapshots saved. */
  readonly commits: number;
  /** Commits lost to another writer of the same actor (each one retried or reported). */
  readonly conflicts: number;
  /** Actors passivated by `sweep()`. */
  readonly passivations: number;
}

/** An activation the host keeps between commands. */
interface Resident extends Activation {
  /** `clock.now()` when it last answered a command. */
  lastUsed: number;
  /** How long it is kept after that (`ActorType.keepMs`). */
  readonly keepMs: number;
}

/** Hosts actors of any `ActorType` over one control store. */
export class ActorHost {
  readonly #store: ControlStore;
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #attempts: number;
  readonly #mailboxes = new Mailboxes();
  readonly #active = new Map<string, Resident>();
  readonly #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #counts = { activations: 0, commits: 0, conflicts: 0, passivations: 0 };

  constructor(options: ActorHostOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#idleMs = options.idleMs ?? 60_000;
    this.#attempts = Math.max(1, options.attempts ?? 5);
    if (options.sweepEveryMs !== undefined) {
      this.#timer = setInterval(() => void this.sweep(), options.sweepEveryMs);
      this.#timer.unref();
    }
  }

  /**
   * Delivers `command` to actor `id` of `type` after the commands sent to it before, and
   * answers once the resulting state is committed.
   * @throws ServiceError when an effect, the actor or the store fails, or `Conflict`
   *   (`version_conflict`) when other processes kept moving the actor on, or it is not
   *   at `options.expect`.
   */
  send<M extends AnyStateMachine, A>(
    type: ActorType<M, A>,
    id: string,
    command: CommandOf<M>,
    options: SendOptions = {},
  ): Promise<A> {
    if (this.#closed) {
      return Promise.reject(new Unavailable('host_closed', 'the actor host is shutting down'));
    }
    return this.#mailboxes.run(keyOf(type.type, id), () =>
      this.#deliver(type, id, command, options.expect),
    );
  }

  /** True while actor `id` of `type` is held in memory. */
  isActive(type: ActorType<AnyStateMachine, unknown>, id: string): boolean {
    return this.#active.has(keyOf(type.type, id));
  }

  /** Counters since the host started. */
  stats(): ActorHostStats {
    const activeByType: Record<string, number> = {};
    for (const key of this.#active.keys()) {
      const type = key.slice(0, key.indexOf('/'));
      activeByType[type] = (activeByType[type] ?? 0) + 1;
    }
    return { active: this.#active.size, activeByType, ...this.#counts };
  }

  /** Passivates every actor idle for `idleMs` with no command queued; answers how many. */
  sweep(): number {
    const now = this.#clock.now();
    let passivated = 0;
    for (const [key, activation] of this.#active) {
      if (!this.#mailboxes.busy(key) && now - activation.lastUsed >= activation.keepMs) {
        this.#drop(key);
        passivated += 1;
        this.#counts.passivations += 1;
      }
    }
    return passivated;
  }

  /** Refuses new commands, waits for those under way and passivates every actor. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#mailboxes.drained();
    for (const key of [...this.#active.keys()]) this.#drop(key);
  }

  async #deliver<M extends AnyStateMachine, A>(
    type: ActorType<M, A>,
    id: string,
    command: CommandOf<M>,
    expect: number | undefined,
  ): Promise<A> {
    const key = keyOf(type.type, id);
    for (let attempt = 1; ; attempt += 1) {
      const activation = await this.#activate(type, id);
      if (expect !== undefined && activation.version !== expect) {
        throw new Conflict(
          'version_conflict',
          `${key} is at version ${String(activation.version)}, not ${String(expect)}`,
        );
      }
      try {
        take(activation, { ...command, now: this.#clock.now() } as EventFromLogic<M>);
        await rested(activation.actor);
        failed(activation.actor);
        await settle(activation.pending.splice(0));
        activation.version = await this.#commit(type, id, activation);
        this.#counts.commits += 1;
      } catch (error) {
        this.#drop(key);
        if (!(error instanceof LostRace)) throw failure('actor_failed', error);
        this.#counts.conflicts += 1;
        if (attempt < this.#attempts) continue;
        throw new Conflict(
          'version_conflict',
          `${key} changed under each of ${attempt} attempts of this command`,
          { cause: error.cause },
        );
      }
      const emitted = activation.emitted.splice(0);
      activation.lastUsed = this.#clock.now();
      const snapshot = activation.actor.getSnapshot() as SnapshotFrom<M>;
      // Committed: a command queued behind this one restores the actor from the store.
      if (activation.keepMs === 0) {
        this.#drop(key);
        this.#counts.passivations += 1;
      }
      return type.answer(snapshot, emitted as EmittedFrom<M>[]);
    }
  }

  /** The actor at its latest stored version, reusing the cached one when it is current. */
  async #activate<M extends AnyStateMachine, A>(
    type: ActorType<M, A>,
    id: string,
  ): Promise<Resident> {
    const key = keyOf(type.type, id);
    const loading: Promise<SnapshotRecord | null> =
      type.state === undefined ? this.#store.loadSnapshot(type.type, id) : type.state.load(id);
    const record = await loading.catch((error: unknown) => {
      throw failure('store_failed', error);
    });
    const version = record?.version ?? 0;
    const cached = this.#active.get(key);
    // A state kept as a resource of its own may repeat a version once deleted: restore it.
    if (cached?.version === version && type.state === undefined) return cached;
    if (cached !== undefined) this.#drop(key);

    try {
      const activation: Resident = Object.assign(activate(type, id, record), {
        keepMs: type.keepMs ?? this.#idleMs,
        lastUsed: this.#clock.now(),
      });
      this.#active.set(key, activation);
      this.#counts.activations += 1;
      return activation;
    } catch (error) {
      throw failure('actor_failed', error);
    }
  }

  async #commit<M extends AnyStateMachine, A>(
    type: ActorType<M, A>,
    id: string,
    activation: Activation,
  ): Promise<number> {
    const persisted: unknown = activation.actor.getPersistedSnapshot();
    const expect = activation.version;
    try {
      return await (type.state === undefined
        ? this.#store.saveSnapshot(type.type, id, persisted, expect)
        : type.state.save(id, persisted, expect));
    } catch (error) {
      // Only the snapshot's own version check is a lost race; an effect's Conflict is its answer.
      if (error instanceof Conflict && error.code === 'version_conflict') throw new LostRace(error);
      throw failure('store_failed', error);
    }
  }

  #drop(key: string): void {
    const activation = this.#active.get(key);
    this.#active.delete(key);
    activation?.actor.stop();
  }
}

function keyOf(type: string, id: string): string {
  return `${type}/${id}`;
}

/** The commit found the snapshot moved on by another writer: retry from fresh state. */
class LostRace extends Error {
  constructor(cause: Conflict) {
    super('the snapshot moved on', { cause });
  }
}
