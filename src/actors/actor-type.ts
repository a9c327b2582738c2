/**
 * What the actor host must know about one kind of actor, and the shapes it trades in.
 *
 * A hosted machine is pure (`src/machines`); its actor type provides the real effects with
 * `machine.provide`, handing every promise an effect starts to the host's `EffectSink`,
 * and turns what a command left behind (the next snapshot, the emitted events) into the
 * command's answer. Every event of a hosted machine carries `now` (ms); the host stamps it
 * from its injected clock, so callers send commands without it.
 */
import type { AnyStateMachine, EmittedFrom, EventFromLogic, SnapshotFrom } from 'xstate';

/**
 * Hands the host the work an effect started. The command is committed and answered only
 * once every such promise fulfils; a rejection aborts the command (nothing is committed)
 * and becomes its typed error. Effects run before the commit and run again if the commit
 * loses a race and the command is retried, so they must be idempotent.
 */
export type EffectSink = (work: Promise<unknown>) => void;

/** One kind of hosted actor. */
export interface ActorType<TMachine extends AnyStateMachine, TAnswer> {
  /** Namespace of its snapshots in the control store (`proposal`, `session`). */
  readonly type: string;
  /** The machine with its real effects provided; called once per activation. */
  logic(effect: EffectSink): TMachine;
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
