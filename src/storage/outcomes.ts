/**
 * Why a log store refuses a write, and the one error each refusal becomes.
 *
 * Every backend reaches the same refusals (the Redis scripts answer them as negative
 * codes, the SQL backends find them inside their transaction) and turns them into
 * errors here, so `code` and `message` are identical whichever store answered
 * (decisions rows 9 and 82; STYLE: one function maps codes to errors for every backend).
 */
import { Conflict } from '../errors.ts';

/** A refused append or archive. */
export type LogRefusal = 'session_archived' | 'idempotency_conflict';

const MESSAGES: Readonly<Record<LogRefusal, string>> = {
  // 3.1: "nothing lands on the session again; append and claim answer a conflict".
  session_archived: 'the session is archived',
  // decisions row 9: a key holds one batch; a different batch under it is refused.
  idempotency_conflict: 'the idempotency key already holds a different batch',
};

/** The error a refusal answers: a 409 `Conflict` with the refusal as its code. */
export function refusalError(refusal: LogRefusal): Conflict {
  return new Conflict(refusal, MESSAGES[refusal]);
}
