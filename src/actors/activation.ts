/**
 * Where every actor of the service runs: the one place an actor of any kind is started and
 * the one place it is sent an event, whoever drives it. The actor host (`actor-host.ts`)
 * drives the proposal, session, connection and claim actors with commands and commits a
 * snapshot after each; a log actor (`log-actor.ts`) drives the turn with the records of
 * its session's log. Both start their actors with `activate` and send with `take`, so a
 * machine behaves the same whichever drives it: the same inert clock, the same sink for
 * its effects, the same collection of what it emits, the same failure when it errors.
 *
 * An activation is one actor started in memory from its persisted snapshot (or fresh, at
 * version 0, when none is stored), with what the events under way collect from it: the
 * effects it hands to its `EffectSink` and the events it emits.
 */
import { createActor, type AnyActor, type AnyStateMachine, type EventObject } from 'xstate';
import type { SnapshotRecord } from '../storage/control-store.ts';
import type { ActorKind } from './actor-type.ts';

/** An actor started from its persisted snapshot. */
export interface Activation {
  readonly actor: AnyActor;
  /** The version the actor's state was committed at (its driver says what counts). */
  version: number;
  /** Effects started by the events under way. */
  readonly pending: Promise<unknown>[];
  /** Events emitted by the events under way. */
  readonly emitted: unknown[];
}

/** XState timers that never fire: hosted machines get time from their events alone. */
const inertClock = { setTimeout: () => 0, clearTimeout: () => undefined };

/**
 * Starts actor `id` of `kind` from `record` (null: fresh, at version 0).
 * @throws whatever the machine throws on start, or the error of a snapshot it cannot
 *   restore (a state it no longer has).
 */
export function activate<M extends AnyStateMachine>(
  kind: ActorKind<M>,
  id: string,
  record: SnapshotRecord | null,
): Activation {
  const pending: Promise<unknown>[] = [];
  const emitted: unknown[] = [];
  const logic = kind.logic((work) => {
    // Marked handled now; the driver awaits it (and reports it) after the transition.
    work.catch(() => undefined);
    pending.push(work);
  }, id);
  const actor = createActor(logic as AnyStateMachine, {
    clock: inertClock,
    ...(record === null ? {} : { snapshot: record.snapshot as never }),
  });
  actor.on('*', (event) => void emitted.push(event));
  // An actor that errors reports to its observers; without one XState rethrows later.
  actor.subscribe({ error: () => undefined });
  actor.start();
  // A snapshot the machine cannot restore (a state it no longer has) errors on start.
  failed(actor);
  return { actor, version: record?.version ?? 0, pending, emitted };
}

/**
 * Sends `event` to the activation's actor. Its effects pile up in `pending` and what it
 * emits in `emitted`, for the driver to settle and answer from. Synchronous: an actor
 * that invokes nothing and starts no effect has taken the event when this returns.
 * @throws the actor's error when the event failed it (an action threw).
 */
export function take(activation: Activation, event: EventObject): void {
  activation.actor.send(event);
  failed(activation.actor);
}

/** Throws the error of an actor that failed; nothing otherwise. */
export function failed(actor: AnyActor): void {
  const snapshot = actor.getSnapshot() as { status: string; error?: unknown };
  if (snapshot.status === 'error') throw snapshot.error;
}
