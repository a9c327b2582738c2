/**
 * Which failures of a Redis command mean "Redis does not answer": they
 * become the one `Unavailable` (503 with `Retry-After`), whatever command met them.
 *
 * - Errors ioredis makes itself when it has no usable connection: the connection closed
 *   under the command, it is not connected (the offline queue is off, `client.ts`), the
 *   command timed out, the reconnection attempts a command may wait for ran out, or the
 *   socket failed (`ECONNRESET`, `ECONNREFUSED`, …). Every one of them may follow a
 *   command the server did run: an append it ran is found by its idempotency key when
 *   the client tries again.
 * - Replies of a server that cannot serve now: `LOADING` (a restarted server reads its
 *   data back), `BUSY`, `MASTERDOWN`, `CLUSTERDOWN`, `TRYAGAIN`, `READONLY` (a failover
 *   in progress), `OOM`.
 *
 * Any other error is a bug or a refusal and stays as it is.
 */
import { Unavailable } from '../../errors.ts';
import { isSocketError } from '../socket-errors.ts';

/** Messages ioredis gives the errors it makes when it has no usable connection. */
const CONNECTION_MESSAGES = new Set([
  'Connection is closed.',
  'Command timed out',
  "Stream isn't writeable and enableOfflineQueue options is false",
  "Cluster isn't ready and enableOfflineQueue options is false",
]);

/** Names of ioredis's own error classes for a lost server or cluster. */
const CONNECTION_ERRORS = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError']);

/** Reply prefixes of a server that is there but cannot serve now. */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|OOM)\b/;

/**
 * True for an error ioredis makes or a reply Redis gives when it cannot serve: known by
 * itself, wherever it is caught (the error handler's safety net reads it too).
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (CONNECTION_ERRORS.has(error.name) || CONNECTION_MESSAGES.has(error.message)) return true;
  return error.name === 'ReplyError' && UNAVAILABLE_REPLY.test(error.message);
}

/** `error` of a Redis command as the caller should see it: `Unavailable` when Redis did not answer. */
export function redisFailure(error: unknown): unknown {
  if (!isRedisUnavailable(error) && !isSocketError(error)) return error;
  return new Unavailable(
    'store_unavailable',
    `Redis does not answer (${(error as Error).message})`,
    { cause: error },
  );
}
