/**
 * When a command to a hosted actor has settled (`actor-host.ts` step 3), and how its
 * failures read to the caller.
 *
 * A command settles in two steps. First the actor comes to rest: it runs no invoked child
 * any more. A machine whose effects are actions rests at once; one that invokes an actor
 * (the connection's `catalogReader` and `authorizer`) waits in the invoking state until
 * the child answers, and the child's done or error event moves it on (XState delivers it
 * as an event; a failed child is a transition the chart handles, not an exception). Then
 * every promise handed to the `EffectSink` must fulfil: a rejection fails the command and
 * nothing is committed. An invoked effect that hands its promise to the sink too makes
 * its failure the command's answer while the chart still returns to where it started.
 *
 * The rule is the machine's own shape, not a per-type flag: a state that invokes an actor
 * is a state the machine passes through, never one it is committed in.
 */
import type { AnyActor } from 'xstate';
import type { CodeOf } from '../error-codes.ts';
import { isServiceError, Unavailable, type ServiceError } from '../errors.ts';

interface Observed {
  readonly status: string;
  readonly children?: Readonly<Record<string, { getSnapshot(): { status: string } } | undefined>>;
}

/** True while the actor is active and one of its invoked children still runs. */
function running(actor: AnyActor): boolean {
  const snapshot = actor.getSnapshot() as Observed;
  if (snapshot.status !== 'active') return false;
  return Object.values(snapshot.children ?? {}).some(
    (child) => child?.getSnapshot().status === 'active',
  );
}

/**
 * Resolves once `actor` rests: no invoked child running, or the actor stopped, finished
 * or failed (the caller reads which from its snapshot).
 */
export function rested(actor: AnyActor): Promise<void> {
  if (!running(actor)) return Promise.resolve();
  return new Promise((resolve) => {
    const subscription = actor.subscribe({
      next: () => {
        if (running(actor)) return;
        subscription.unsubscribe();
        resolve();
      },
      error: () => {
        resolve();
      },
      complete: () => {
        resolve();
      },
    });
  });
}

/** Waits for every effect; the first rejection, in the order they started, fails the command. */
export async function settle(pending: readonly Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(pending);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failure('effect_failed', failed.reason);
}

/** The error as a caller may see it: a `ServiceError` as it is, anything else as `Unavailable`. */
export function failure(code: CodeOf<503>, error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new Unavailable(code, `${code.replaceAll('_', ' ')}: ${message}`, { cause: error });
}
