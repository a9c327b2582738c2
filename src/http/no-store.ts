/**
 * Answers that carry a credential must not be kept by any cache between the service and
 * its caller (RFC 6749 §5.1, RFC 9111 §5.2.2.5): a console or session
 * token, an executor token or grant, an install key (the poll receipt, a rotation), a poll
 * secret (a proposal). Each such route takes `noStore` as its `onSend` hook, so every
 * answer it gives, problems included, says `Cache-Control: no-store` and, for HTTP/1.0
 * caches, `Pragma: no-cache`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The `onSend` hook of a route whose answers carry a credential. */
export function noStore<Payload>(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: Payload,
  done: (error: null, payload: Payload) => void,
): void {
  void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  done(null, payload);
}
