/**
 * Appending on PostgreSQL in one round trip: a group of batches, on any streams, is one
 * call of the `log_append` procedure (migrations 003 and 006), which locks each stream's
 * row, checks the key, refuses an archived stream, mints cursors and `at`, inserts, moves
 * the head, commits, and then notifies the tails; it answers one outcome per batch. This
 * module only encodes the batches as JSON and decodes the answers. The records of a
 * landed batch are built here from what was sent and the first cursor and `at` the
 * procedure minted, so nothing is read back.
 *
 * Failures: a deadlock or serialization failure rolled the records back and is retried,
 * as the driver does for its transactions (the procedure locks streams in one order, so
 * two appends do not deadlock each other, but other writers of the rows may). A call
 * refused for what a batch held (`isolatesPostgres`) wrote nothing either, and the group
 * runner sends its batches again one by one so the refusal reaches only the batch that
 * caused it. Anything else, a lost connection above all, fails the group: the commit may
 * or may not have happened, and only a keyed resend can tell.
 */
import pg from 'pg';
import type { Clock } from '../../clock.ts';
import { refusalError } from '../outcomes.ts';
import type { AppendBatch, AppendResult } from '../log-store.ts';
import { int, type SqlDriver, type SqlRow } from './driver.ts';
import type { ItemOutcome } from './group-runner.ts';
import { stamp, toStored } from './log-reads.ts';
import { recordTuple } from './record-tuples.ts';

/** serialization_failure, deadlock_detected: the statement rolled back, try it again. */
const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 5;
/**
 * SQLSTATE classes of a statement refused for what it was given: data exception (22),
 * integrity constraint (23), raised in plpgsql (P0). Raised before the commit, so
 * nothing of the group was written.
 */
const ISOLATING = ['22', '23', 'P0'];

/** Outside any transaction block: the procedure commits before it notifies. */
const CALL = 'CALL log_append(?::jsonb, ?, ?, NULL)';

function sqlState(error: unknown): string | undefined {
  return error instanceof pg.DatabaseError ? error.code : undefined;
}

/** Whether a failed call wrote nothing because of what one of its batches held. */
export function isolatesPostgres(error: unknown): boolean {
  const code = sqlState(error);
  return code !== undefined && ISOLATING.some((prefix) => code.startsWith(prefix));
}

/** The JSON the procedure takes: `{s, k, f, r: [record tuples]}` (`record-tuples.ts`). */
function encode(batches: readonly AppendBatch[]): string {
  return JSON.stringify(
    batches.map((batch) => ({
      s: batch.stream,
      k: batch.key,
      f: batch.fingerprint,
      r: batch.records.map(recordTuple),
    })),
  );
}

function decode(batch: AppendBatch, answer: unknown): ItemOutcome<AppendResult> {
  const row = (typeof answer === 'object' && answer !== null ? answer : {}) as SqlRow;
  switch (row.o) {
    case 'landed': {
      const records = stamp(batch.stream, int(row, 'c'), int(row, 'a'), batch.records);
      return { ok: true, value: { outcome: 'landed', records } };
    }
    case 'replayed': {
      const rows = Array.isArray(row.r) ? (row.r as SqlRow[]) : [];
      return { ok: true, value: { outcome: 'replayed', records: rows.map(toStored) } };
    }
    case 'conflict':
      return { ok: false, error: refusalError('idempotency_conflict') };
    case 'archived':
      return { ok: false, error: refusalError('session_archived') };
    default:
      return { ok: false, error: new Error('log_append did not answer the batch') };
  }
}

/** Lands a group of batches in one call of `log_append`; one outcome per batch, in order. */
export async function appendPostgres(
  driver: SqlDriver,
  clock: Clock,
  channel: string,
  batches: readonly AppendBatch[],
): Promise<ItemOutcome<AppendResult>[]> {
  const json = encode(batches);
  for (let attempt = 1; ; attempt++) {
    try {
      const [row] = await driver.query(CALL, [json, clock.now(), channel]);
      const answers = Array.isArray(row?.answers) ? (row.answers as unknown[]) : [];
      return batches.map((batch, index) => decode(batch, answers[index]));
    } catch (error) {
      const code = sqlState(error);
      if (code === undefined || !RETRYABLE.has(code) || attempt >= ATTEMPTS) throw error;
    }
  }
}
