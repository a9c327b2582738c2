/**
 * An actor whose store is a log: the turn (`turn.actor.ts`), driven by its session's
 * records. It runs on the host's code (`activation.ts`: the same `activate`, the same
 * `take`); what differs is where its state is kept, and so how it is committed.
 *
 * The actor host commits a command's outcome by saving a snapshot at the next version,
 * checked against the version it read. A log actor's events are the log's records, in
 * cursor order, and the log already keeps them: the version is the cursor of the last
 * record taken, committing an event is its record having landed, and the log store's
 * cursor minting is the version check (`take` refuses a record past the next cursor, as
 * the host refuses a stale version; the driver reads the gap and goes on, as the host
 * reloads). Taking a record is therefore synchronous: no load, no save, no await. A saved
 * snapshot is only a cache: restoring is `activate` from it at its cursor, then taking the
 * records after it, and replaying the log from cursor 1 into a fresh actor reaches the
 * same snapshot (test/turns/replay.test.ts).
 *
 * For that to hold the kind must start no effect and emit nothing: a record is taken
 * again on every replay, so its output is the snapshot alone, which the driver reads to
 * decide what to land next (`src/turns/plan.ts`). `take` refuses a machine that does.
 */
import type { AnyStateMachine, EventFromLogic, SnapshotFrom } from 'xstate';
import { activate, take, type Activation } from './activation.ts';
import type { ActorKind } from './actor-type.ts';

/** A persisted snapshot and the cursor of the last record it took. */
export interface LogSnapshot {
  readonly snapshot: unknown;
  readonly cursor: number;
}

/** One actor of `kind` driven by the records of log `id`. */
export class LogActor<M extends AnyStateMachine> {
  /** `<kind> <id>`, as errors name it. */
  readonly #name: string;
  readonly #activation: Activation;

  /**
   * Starts the actor fresh at cursor 0, or from `saved` at its cursor.
   * @throws the error of a snapshot the machine cannot restore.
   */
  constructor(kind: ActorKind<M>, id: string, saved?: LogSnapshot) {
    this.#name = `${kind.type} ${id}`;
    this.#activation = activate(
      kind,
      id,
      saved === undefined ? null : { snapshot: saved.snapshot, version: saved.cursor },
    );
  }

  /** The cursor of the last record taken: the actor's version. */
  get cursor(): number {
    return this.#activation.version;
  }

  get snapshot(): SnapshotFrom<M> {
    return this.#activation.actor.getSnapshot() as SnapshotFrom<M>;
  }

  /** The persisted snapshot: saved beside `cursor`, it restores as a `LogSnapshot`. */
  persisted(): unknown {
    return this.#activation.actor.getPersistedSnapshot();
  }

  /**
   * Whether the record at `cursor` is the next one: false when it was taken already (it
   * came twice, from a read and a tail).
   * @throws Error when it is past the next one: the caller reads the gap first.
   */
  next(cursor: number): boolean {
    const head = this.#activation.version;
    if (cursor <= head) return false;
    if (cursor !== head + 1) {
      throw new Error(`record ${cursor} of ${this.#name} arrived before ${head + 1}`);
    }
    return true;
  }

  /**
   * Takes `event`, the record at `cursor` (which `next` accepted), and commits it: the
   * version moves to `cursor`.
   * @throws the actor's error when the event failed it, or Error when `cursor` is not the
   *   next one or the event started an effect or emitted an event (a replay would redo it).
   */
  take(cursor: number, event: EventFromLogic<M>): void {
    const activation = this.#activation;
    if (cursor !== activation.version + 1) {
      throw new Error(`record ${cursor} of ${this.#name} taken at ${activation.version}`);
    }
    take(activation, event);
    if (activation.pending.length > 0 || activation.emitted.length > 0) {
      throw new Error(`${this.#name}: a log actor's record started an effect or emitted an event`);
    }
    activation.version = cursor;
  }
}
