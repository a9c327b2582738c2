/**
 * An activation: one actor of a hosted machine started in memory from its stored
 * snapshot (or fresh, at version 0, when none is stored), with what the command under way
 * collects from it: the effects it hands to its `EffectSink` and the events it emits.
 */
import { createActor, type AnyActor, type AnyStateMachine } from 'xstate';
import type { SnapshotRecord } from '../storage/control-store.ts';
import type { ActorType } from './actor-type.ts';

/** An actor held in memory by the host. */
export interface Activation {
  readonly actor: AnyActor;
  /** The stored version the actor's state was committed at. */
  version: number;
  /** `clock.now()` when it last answered a command. */
  lastUsed: number;
  /** How long it is kept after that (`ActorType.keepMs`). */
  readonly keepMs: number;
  /** Effects started by the command under way. */
  readonly pending: Promise<unknown>[];
  /** Events emitted by the command under way. */
  readonly emitted: unknown[];
}

/** XState timers that never fire: hosted machines get time from `now` alone. */
const inertClock = { setTimeout: () => 0, clearTimeout: () => undefined };

/**
 * Starts actor `id` of `type` from `record`.
 * @throws whatever the machine throws on start, or the error of a snapshot it cannot
 *   restore (a state it no longer has).
 */
export function activate<M extends AnyStateMachine, A>(
  type: ActorType<M, A>,
  id: string,
  record: SnapshotRecord | null,
  at: { readonly keepMs: number; readonly now: number },
): Activation {
  const pending: Promise<unknown>[] = [];
  const emitted: unknown[] = [];
  const logic = type.logic((work) => {
    // Marked handled now; the command awaits it (and reports it) after the transition.
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
  const started = actor.getSnapshot() as { status: string; error?: unknown };
  // A snapshot the machine cannot restore (a state it no longer has) errors on start.
  if (started.status === 'error') throw started.error;
  return {
    actor,
    version: record?.version ?? 0,
    lastUsed: at.now,
    keepMs: at.keepMs,
    pending,
    emitted,
  };
}
