/**
 * Usage checkpoints (interface 2.15; decisions rows 52, 53): a session's records are
 * counted into its tenant's UTC-day rows when the day they landed on is over (the 00:00
 * UTC checkpoint of a live session) and when the session is archived.
 *
 * Exactly once, across crashes and processes: each session keeps the cursor it is counted
 * through, and one checkpoint counts one day's records and moves that cursor in the same
 * transaction, expecting it where it read it (`WorkStore.checkpointUsage`). A checkpoint
 * that lost a race or was cut by a crash changes nothing, and the next one starts from
 * where the store says.
 *
 * What counts: `events` every record, `bytes_archived` the sum of their sizes (row 12),
 * tokens per model key from `model.output` and `compaction.completed` usage (row 52), and
 * `tool_calls` per model-visible name from each call a `model.output` asks for; every
 * checkpoint counts its session once in `sessions_checkpointed`.
 */
import type { UsageDelta } from '../storage/control-store.ts';
import type { LogStore, StoredRecord } from '../storage/log-store.ts';
import type { WorkStore } from '../storage/work-store.ts';
import { nextUtcMidnight } from './plan.ts';

/** Records read per round trip while counting. */
const PAGE = 1000;

type Tally = { -readonly [K in keyof UsageDelta]: UsageDelta[K] } & {
  tokens: Record<string, { input: number; output: number }>;
  toolCalls: Record<string, number>;
};

/** The UTC day (`YYYY-MM-DD`) of an instant. */
export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** Adds what one record counts for. */
function count(tally: Tally, record: StoredRecord, model: string): void {
  tally.events += 1;
  tally.bytesArchived += record.envelope.size;
  const name = record.envelope.kind.name;
  if (name !== 'model.output' && name !== 'compaction.completed') return;
  let body: {
    usage?: { input?: unknown; output?: unknown };
    model?: unknown;
    tool_calls?: unknown;
  };
  try {
    body = JSON.parse(record.body) as typeof body;
  } catch {
    return;
  }
  const key = typeof body.model === 'string' ? body.model : model;
  const input = typeof body.usage?.input === 'number' ? body.usage.input : 0;
  const output = typeof body.usage?.output === 'number' ? body.usage.output : 0;
  const before = tally.tokens[key] ?? { input: 0, output: 0 };
  tally.tokens[key] = { input: before.input + input, output: before.output + output };
  if (Array.isArray(body.tool_calls)) {
    for (const call of body.tool_calls as { name?: unknown }[]) {
      if (typeof call.name === 'string') {
        tally.toolCalls[call.name] = (tally.toolCalls[call.name] ?? 0) + 1;
      }
    }
  }
}

export interface CheckpointTarget {
  readonly log: LogStore;
  readonly work: WorkStore;
  readonly session: string;
  readonly tenant: string;
  /** The usage key of compaction records without their own `model` (the provider's). */
  readonly model: string;
}

/** The `at` of the target session's first record not yet counted; null when all are. */
export async function firstUncountedAt(target: CheckpointTarget): Promise<number | null> {
  const counted = await target.work.countedThrough(target.session);
  const [first] = await target.log.read(target.session, { from: counted + 1, limit: 1 });
  return first?.envelope.at ?? null;
}

/**
 * Counts the first uncounted day of `session` if it is over at `now` (or `final`: the
 * session is archived, so every record counts now). Answers the first record's `at` that
 * is still uncounted afterwards, or null when every record is counted.
 */
export async function checkpointOnce(
  target: CheckpointTarget,
  now: number,
  final: boolean,
): Promise<number | null> {
  const { log, work, session } = target;
  const counted = await work.countedThrough(session);
  let from = counted + 1;
  let day: string | null = null;
  let through = counted;
  const tally: Tally = {
    events: 0,
    bytesArchived: 0,
    sessionsCheckpointed: 1,
    tokens: {},
    toolCalls: {},
  };
  for (;;) {
    const records = await log.read(session, { from, limit: PAGE });
    for (const record of records) {
      const at = record.envelope.at;
      if (day === null) {
        if (!final && nextUtcMidnight(at) > now) return at;
        day = utcDay(at);
      }
      if (utcDay(at) !== day) {
        await work.checkpointUsage(session, counted, through, target.tenant, day, tally);
        return at;
      }
      count(tally, record, target.model);
      through = record.envelope.cursor;
    }
    if (records.length < PAGE) break;
    from = through + 1;
  }
  if (day !== null)
    await work.checkpointUsage(session, counted, through, target.tenant, day, tally);
  return null;
}

/** When the first uncounted record's day is checkpointed: the next 00:00 UTC after it. */
export function checkpointDue(
  firstUncountedAt: number | null,
  final: boolean,
  now: number,
): number | null {
  if (firstUncountedAt === null) return null;
  return final ? now : nextUtcMidnight(firstUncountedAt);
}
