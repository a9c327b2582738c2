/**
 * What the runtime must know about one kind of actor, and the shapes it trades in.
 *
 * Every actor runs from its `ActorKind` (`activation.ts`): its type name and its machine
 * with the real effects provided. An `ActorType` is a kind the actor host drives with
 * commands and commits as snapshots (proposal, session, connection, claim); the turn is a
 * kind a log actor drives with its session's records (`log-actor.ts`, `turn.actor.ts`).
 *
 * A hosted machine is pure (`src/machines`); its actor type provides the real effects with
 * `machine.provide`, handing every promise an effect starts to the host's `EffectSink`,
 * and turns what a command left behind (the next snapshot, the emitted events) into the
 * command's answer. Every event of a hosted machine carries `now` (ms); the host stamps it
 * from its injected clock, so callers send commands without it.
 *
 * Effects are actions (fire-and-forget: the machine moves on at once) or invoked actors
 * (the machine waits in a state for their answer, e.g. the connection's probes). Either
 * way the host answers a command only once the actor has settled: no invoked child still
 * running, and every promise handed to the sink fulfilled.
 */
import type { AnyStateMachine, EmittedFrom, EventFromLogic, SnapshotFrom } from 'xstate';
import type { SnapshotRecord } from '../storage/control-store.ts';

/**
 * Hands the host the work an effect started. The command is committed and answered only
 * once every such promise fulfils; a rejection aborts the command (nothing is committed)
 * and becomes its typed error. Effects run before the commit and run again if the commit
 * loses a race and the command is retried, so they must be idempotent.
 */
export type EffectSink = (work: Promise<unknown>) => void;

/**
 * Where actors of a type keep their state when it is a resource of its own (what the
 * routes read, with its indexes) rather than an actor snapshot. The host loads it before
 * every command and restores the actor from it each time: a resource that was deleted
 * starts its versions again, so an actor held in memory is never trusted to be current.
 */
export interface StateStore {
  /** The state as a persisted snapshot, and its version; null when there is none yet. */
  load(id: string): Promise<SnapshotRecord | null>;
  /**
   * Saves a persisted snapshot if the state is still at `expect` (0: none); answers the
   * version it is at now.
   * @throws Conflict `version_conflict` when another writer moved it on.
   */
  save(id: string, snapshot: unknown, expect: number): Promise<number>;
}

/** One kind of actor: what starting one takes (`activate`). */
export interface ActorKind<TMachine extends AnyStateMachine> {
  /** Its name: the namespace of its snapshots in the control store (`proposal`, `session`). */
  readonly type: string;
  /** The machine with its real effects provided, for actor `id`; called once per activation. */
  logic(effect: EffectSink, id: string): TMachine;
}

/** One kind of actor the host drives with commands (`actor-host.ts`). */
export interface ActorType<TMachine extends AnyStateMachine, TAnswer> extends ActorKind<TMachine> {
  /**
   * Where its state is kept; absent, as snapshots under `type`
   * (`ControlStore.loadSnapshot` and `saveSnapshot`).
   */
  readonly state?: StateStore;
  /**
   * How long (ms) an activation is kept in memory after its last command; absent, the
   * host's `idleMs`. 0 passivates it as soon as it has answered: for an actor whose
   * commands are far apart, keeping it only holds memory, since every command reads the
   * stored state anyway.
   */
  readonly keepMs?: number;
  /**
   * The command's answer from the snapshot it left and the events it emitted, in order.
   * Called after the commit; it may throw a `ServiceError`.
   */
  answer(snapshot: SnapshotFrom<TMachine>, emitted: readonly EmittedFrom<TMachine>[]): TAnswer;
}

/** An event without the `now` the host stamps (distributes over event unions). */
export type Unstamped<TEvent> = TEvent extends unknown ? Omit<TEvent, 'now'> : never;

/** A command for actors of `TMachine`: one of its events, without `now`. */
export type CommandOf<TMachine extends AnyStateMachine> = Unstamped<EventFromLogic<TMachine>>;
