/**
 * Where the real servers the suites talk to live. `.ci/run` exports these; locally the
 * defaults name the servers this machine runs. A suite that cannot reach its server
 * fails with this message: it never skips.
 */
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function unreachable(what: string, url: string, cause: unknown): Error {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(`${what} at ${url} does not answer (${reason}); start it or run bash .ci/run`, {
    cause,
  });
}
