/**
 * Pulling the next step of an async iterator by handing it a sink, rather than through
 * the promise `next` answers. A consumer that waits long for its next step, as an open
 * tail does, then holds no pending promise and no reaction at each layer, only the sink,
 * which is the consumer itself (its methods, not closures made for the wait). The log
 * store's tail (`follower.ts`), a traced store's tail (`telemetry/store-spans.ts`) and
 * the session tail's lines (`http/tails/lines.ts`) can be pulled, each a `Pulled`; a
 * consumer falls back to `next` for an iterator that cannot (`pullFrom`).
 */

/** The step that ends an iteration. */
export const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** Hears the next step of a pull, once: the step, or the failure that ended the iterator. */
export interface StepSink<T> {
  took(step: IteratorResult<T, void>): void;
  failed(error: unknown): void;
}

/** An async iterator that can hand its next step to a sink instead of a promise. */
export interface Pullable<T> extends AsyncIterator<T, void> {
  /**
   * Hands the next step to `sink`, never before this call returns. As with `next`, one
   * pull at a time: the next pull comes after `sink` heard this one.
   */
  pull(sink: StepSink<T>): void;
}

function pullable<T>(iterator: AsyncIterator<T, unknown>): iterator is Pullable<T> {
  return typeof (iterator as Partial<Pullable<T>>).pull === 'function';
}

/** Pulls the next step of `iterator` into `sink`, through `next` when it cannot be pulled. */
export function pullFrom<T>(iterator: AsyncIterator<T, unknown>, sink: StepSink<T>): void {
  if (pullable(iterator)) {
    iterator.pull(sink);
    return;
  }
  iterator.next().then(
    (step) => {
      sink.took(step.done === true ? DONE : step);
    },
    (error: unknown) => {
      sink.failed(error);
    },
  );
}

/**
 * A pullable iterator that is its own iterable, and whose `next` is its `pull` answered by
 * a promise, so that every consumer goes one way whichever it calls.
 */
export abstract class Pulled<T> implements Pullable<T>, AsyncIterableIterator<T, void> {
  abstract pull(sink: StepSink<T>): void;
  abstract return(): Promise<IteratorResult<T, void>>;

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, void>> {
    return new Promise((resolve, reject) => {
      this.pull({ took: resolve, failed: reject });
    });
  }
}

/** Hands `step` to `sink` on a later microtask: a pull never answers before it returns. */
export function tellLater<T>(sink: StepSink<T>, step: IteratorResult<T, void>): void {
  void Promise.resolve(step).then((taken) => {
    sink.took(taken);
  });
}
