/**
 * How a log store's tail (`follower.ts`) is consumed: pulled into a sink (`pull.ts`) or
 * through `next`, one step at a time. A tail with nothing to hand on parks on its fan-out
 * subscription (`Subscription.park`) and pulls again once woken: a waiting tail holds no
 * promise, and, as its subscription's waker and listener, no closure made for the wait.
 * Every open session tail waits here (`docs/benchmarks.md`, "Open tails").
 */
import type { StoredRecord, TailOptions } from './log-store.ts';
import { Pulled, type StepSink } from './pull.ts';
import {
  offerTo,
  type FedRecord,
  type Listener,
  type Subscription,
  type TailPosition,
  type Waker,
} from './subscription.ts';

export type Step = IteratorResult<StoredRecord, void>;

export abstract class ParkedTail
  extends Pulled<StoredRecord>
  implements TailPosition, Listener, Waker
{
  /** Aborted when the reader goes. */
  readonly #signal: AbortSignal | undefined;
  /** Records that land while the tail waits go straight here (`offered`), if given. */
  readonly #deliver: ((record: StoredRecord) => boolean) | undefined;
  /** The consumer of the pull that waits on the subscription. */
  #sink: StepSink<StoredRecord> | undefined;

  constructor(options: TailOptions) {
    super();
    this.#signal = options.signal;
    this.#deliver = options.deliver;
  }

  abstract readonly stop: number;
  abstract expected(): number;
  abstract passed(cursor: number): void;
  abstract over(): boolean;
  /** The next step, or undefined when the tail is to wait on `parking()`. */
  protected abstract advance(): Promise<Step | undefined>;
  /** The subscription a tail with nothing to hand on waits on; none ends it. */
  protected abstract parking(): Subscription | undefined;
  /** Ends the tail, letting go of its subscription. */
  protected abstract finish(): Step;

  /** True once the reader's signal aborted. */
  protected aborted(): boolean {
    return this.#signal?.aborted === true;
  }

  /**
   * The next record, told to `sink`. A tail with nothing to hand on parks (see the module
   * comment); it wakes on a record, a drop or the end of its subscription, and on the
   * reader's signal.
   */
  pull(sink: StepSink<StoredRecord>): void {
    this.advance().then(
      (step) => {
        if (step === undefined) this.#park(sink);
        else sink.took(step);
      },
      (error: unknown) => {
        sink.failed(error);
      },
    );
  }

  #park(sink: StepSink<StoredRecord>): void {
    const subscription = this.parking();
    if (subscription === undefined) {
      sink.took(this.finish());
      return;
    }
    this.#sink = sink;
    if (!this.aborted() && subscription.park(this, this.#listening())) {
      // An object listener: the reader's signal holds this tail, no closure made for it.
      this.#signal?.addEventListener('abort', this, { once: true });
      return;
    }
    this.#sink = undefined;
    this.pull(sink);
  }

  /** This tail as its subscription's listener, when records may go to `deliver`. */
  #listening(): Listener | undefined {
    return this.#deliver === undefined ? undefined : this;
  }

  /** See `Listener`: a record that lands while the tail waits. */
  offered(entry: FedRecord): boolean {
    return this.#deliver !== undefined && offerTo(this.#deliver, this, entry);
  }

  /**
   * See `Waker`: the parked tail pulls again, on a later microtask, since the
   * subscription calls this while its reader hands records to every tail of a stream.
   */
  woken(): void {
    if (this.#sink === undefined) return;
    this.#signal?.removeEventListener('abort', this);
    void Promise.resolve(this).then(ParkedTail.#resume);
  }

  /** Pulls again into the parked sink, once (see `woken`). */
  static readonly #resume = (tail: ParkedTail): void => {
    const sink = tail.#sink;
    tail.#sink = undefined;
    if (sink !== undefined) tail.pull(sink);
  };

  /** The reader's signal aborted while the tail was parked: it wakes, and finds it over. */
  handleEvent(): void {
    this.parking()?.unpark(this);
    this.woken();
  }
}
