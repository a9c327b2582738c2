/**
 * One log line per request, with its request id (issue 2 item 8). Fastify's own request
 * logging (two lines, raw URL) is off; this hook writes the line once the answer is sent,
 * with secret query parameters scrubbed from the URL and no headers at all.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { scrubUrl } from '../logger.ts';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify `genReqId`: a caller's well-formed `X-Request-Id`, or a fresh UUID. */
export function requestId(request: { headers: Record<string, string | string[] | undefined> }) {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given) ? given : randomUUID();
}

/** Installs the per-request log line and echoes the request id on every answer. */
export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    request.log.info(
      {
        method: request.method,
        url: scrubUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        ip: request.ip,
      },
      'request',
    );
    done();
  });
}
