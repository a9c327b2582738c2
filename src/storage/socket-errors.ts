/**
 * A socket error of a store client: a Node system error such as `ECONNRESET`,
 * `ECONNREFUSED`, `ETIMEDOUT` or `EPIPE`, met on a connection to Redis or PostgreSQL.
 * Only a store's own code may read it so: the same codes elsewhere (a file, an MCP peer)
 * mean something else.
 */
export function isSocketError(error: unknown): boolean {
  return (
    error instanceof Error &&
    'code' in error &&
    typeof error.code === 'string' &&
    /^E[A-Z]+$/.test(error.code)
  );
}
