/**
 * One session's turn state as the runtime holds it: the turn actor (part C), the reader
 * that turns records into its events, and the transcript the next prompt is built from,
 * all fed the same landed records in cursor order.
 *
 * The turn actor runs on the same code as every other actor (`src/actors/activation.ts`),
 * as a `LogActor`: its store is the session's log, its version the cursor of the last
 * record it took, and a landed record its commit, so applying one is synchronous (no
 * store round trip). Records are applied exactly once each, in order: a record at or
 * below the head is skipped (it came twice, from a read and a tail), and one past
 * `head + 1` is refused, so the caller reads the gap first. Whoever holds the state (the
 * driver, a status read, the archive path) catches it up from the log with `catchUp`;
 * `reached(cursor)` resolves once a record has been applied, which is how the driver
 * waits for what it just landed.
 */
import type { Snapshot, SnapshotFrom } from 'xstate';
import { LogActor } from '../actors/log-actor.ts';
import { turnActor } from '../actors/turn.actor.ts';
import type { turnMachine, TurnContext, TurnPhase } from '../machines/turn.machine.ts';
import type { LogStore, StoredRecord } from '../storage/log-store.ts';
import { RecordReader } from './events.ts';
import { Transcript, type TranscriptData } from './transcript.ts';

/** Records read per round trip while catching up. */
const CATCH_UP_PAGE = 1000;

/** What `session.opened` fixed for the session's life, as the runtime needs it. */
export interface SessionBasics {
  readonly instructions: string | null;
  /** The model-visible tool names the session was opened with (part B `tools`). */
  readonly tools: readonly string[];
  readonly params: {
    readonly max_tokens: number | null;
    readonly stop: readonly string[];
    readonly temperature: number | null;
    readonly top_p: number | null;
  };
}

export type TurnSnapshot = SnapshotFrom<typeof turnMachine>;

/** A session state as plain data, to save and restore (`state-snapshot.ts`). */
export interface SessionStateData {
  /** The turn machine's persisted snapshot. */
  readonly machine: Snapshot<unknown>;
  readonly basics: SessionBasics;
  readonly transcript: TranscriptData;
}

/** A session's turn actor, reader and transcript. */
export class SessionState {
  readonly session: string;
  readonly #actor: LogActor<typeof turnMachine>;
  readonly #reader = new RecordReader();
  readonly #transcript: Transcript;
  #basics: SessionBasics = {
    instructions: null,
    tools: [],
    params: { max_tokens: null, stop: [], temperature: null, top_p: null },
  };
  /** The head of the state's last save, or of the save it was restored from (`state-snapshot.ts`). */
  savedAt = 0;
  /**
   * `at` of the last `turn.started` this object applied (metrics: a turn's duration);
   * null until one, and not saved, so a state restored mid-turn does not know it.
   */
  turnStartedAt: number | null = null;
  #waiters: { readonly cursor: number; readonly resolve: () => void }[] = [];
  #listeners = new Set<(record: StoredRecord) => void>();

  /**
   * A fresh state at cursor 0, or the one `saved` holds.
   * @throws the error of a saved machine snapshot the turn machine cannot restore.
   */
  constructor(session: string, tenantKey: Buffer, saved?: SessionStateData) {
    this.session = session;
    this.#actor = new LogActor(
      turnActor,
      session,
      saved === undefined ? undefined : { snapshot: saved.machine, cursor: headOf(saved.machine) },
    );
    this.#transcript = new Transcript(tenantKey, saved?.transcript);
    if (saved !== undefined) this.#basics = saved.basics;
  }

  /** The state as plain data: what `new SessionState(…, saved)` restores. */
  data(): SessionStateData {
    return {
      machine: this.#actor.persisted() as Snapshot<unknown>,
      basics: this.#basics,
      transcript: this.#transcript.data(),
    };
  }

  /** The last applied cursor: the turn actor's version, its machine's `head`. */
  get head(): number {
    return this.#actor.cursor;
  }

  get snapshot(): TurnSnapshot {
    return this.#actor.snapshot;
  }

  get context(): TurnContext {
    return this.#actor.snapshot.context;
  }

  /** `live.phase` (row 35): the machine's state, `ended` once archived. */
  get phase(): TurnPhase {
    return this.#actor.snapshot.value;
  }

  get basics(): SessionBasics {
    return this.#basics;
  }

  get transcript(): Transcript {
    return this.#transcript;
  }

  /** Applies `record` if it is the next one; answers whether it was applied. */
  apply(record: StoredRecord): boolean {
    const cursor = record.envelope.cursor;
    if (!this.#actor.next(cursor)) return false;
    const { event, body } = this.#reader.read(record);
    if (event.type === 'session.opened') this.#basics = basicsOf(body);
    if (event.type === 'turn.started') this.turnStartedAt = record.envelope.at;
    this.#transcript.apply(event, body);
    this.#actor.take(cursor, event);
    // Most records have no one waiting for them: no new list per record then.
    if (this.#waiters.length > 0) {
      this.#waiters = this.#waiters.filter((waiter) => {
        if (waiter.cursor > cursor) return true;
        waiter.resolve();
        return false;
      });
    }
    for (const listener of this.#listeners) listener(record);
    return true;
  }

  /**
   * Applies what an append answered, in order: answers whether the state now stands at
   * or past the last of `records`. False when they do not continue the head (a record
   * landed in between by someone else, or `records` is empty): the caller reads the log.
   */
  absorb(records: readonly StoredRecord[]): boolean {
    const last = records.at(-1);
    if (last === undefined) return false;
    for (const record of records) {
      if (record.envelope.cursor > this.head + 1) return false;
      this.apply(record);
    }
    return this.head >= last.envelope.cursor;
  }

  /** Reads and applies every record past the head. */
  async catchUp(log: LogStore): Promise<void> {
    for (;;) {
      const records = await log.read(this.session, { from: this.head + 1, limit: CATCH_UP_PAGE });
      for (const record of records) this.apply(record);
      if (records.length < CATCH_UP_PAGE) return;
    }
  }

  /** Resolves once the record at `cursor` has been applied. */
  reached(cursor: number): Promise<void> {
    if (cursor <= this.head) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ cursor, resolve }));
  }

  /** Calls `listener` with every record applied from now on; answers its removal. */
  listen(listener: (record: StoredRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** The cursor a saved machine snapshot stands at (its context's `head`). */
function headOf(machine: Snapshot<unknown>): number {
  const head = (machine as { context?: { head?: unknown } }).context?.head;
  if (typeof head !== 'number') throw new Error('a saved turn state without its head');
  return head;
}

function basicsOf(body: Record<string, unknown>): SessionBasics {
  const params = (body.params ?? {}) as Record<string, unknown>;
  const numberOrNull = (value: unknown): number | null =>
    typeof value === 'number' ? value : null;
  return {
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    tools: Array.isArray(body.tools)
      ? (body.tools as { name?: unknown }[]).flatMap((t) =>
          typeof t.name === 'string' ? [t.name] : [],
        )
      : [],
    params: {
      max_tokens: numberOrNull(params.max_tokens),
      stop: Array.isArray(params.stop) ? params.stop.filter((s) => typeof s === 'string') : [],
      temperature: numberOrNull(params.temperature),
      top_p: numberOrNull(params.top_p),
    },
  };
}
