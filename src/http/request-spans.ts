/**
 * A server span per request, when tracing is on (`src/telemetry/`).
 *
 * The span starts in the first `onRequest` hook and ends in `onResponse`, when the
 * client goes away, or, for a WebSocket, when its connection closes. Its parent is the caller's trace when the request carries a valid
 * W3C `traceparent`; everything the request then does runs inside its context (the hook
 * chain, body parsing and handler continue from within `context.with`), so a store
 * call's span is its child.
 *
 * Named `<method> <route template>` (`POST /sessions/:id/events`), with
 * `http.request.method`, `http.route`, `url.scheme` and `http.response.status_code`; a
 * 5xx answer marks it as an error with `error.type` the status code. Never the URL
 * itself (ids, query parameters), headers or bodies: nothing that may carry a credential.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Registers the request span hooks; call before any other `onRequest` hook. */
export function installRequestSpans(app: FastifyInstance, tracer: Tracer): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  /**
   * The spans of WebSocket tails whose connection is still open: they end when it closes.
   * Held by span, not by request: an open tail no longer holds its upgrade request.
   */
  const upgraded = new Set<Span>();

  /** Ends `span` with the answer's status (or why there was none). */
  const end = (span: Span, status: number | 'aborted'): void => {
    if (status === 'aborted') {
      span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
    } else {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
      }
    }
    span.end();
  };

  /** Ends the request's span once. */
  const finish = (request: FastifyRequest, status: number | 'aborted'): void => {
    const span = spans.get(request);
    if (span === undefined) return;
    spans.delete(request);
    upgraded.delete(span);
    end(span, status);
  };

  /** Ends the connection's span of an upgraded request, unless a refusal ended it first. */
  const closed = (span: Span): void => {
    if (upgraded.delete(span)) end(span, 101);
  };

  const isUpgrade = (request: FastifyRequest): boolean =>
    request.headers.upgrade?.toLowerCase() === 'websocket';
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    // Undefined for a request no route matched (a 404).
    const route = request.routeOptions.url;
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: request.method,
          [ATTR_URL_SCHEME]: request.protocol,
          ...(route === undefined ? {} : { [ATTR_HTTP_ROUTE]: route }),
        },
      },
      parent,
    );
    spans.set(request, span);
    // A WebSocket tail answers 101 and never sends a reply Fastify would see finish: its
    // span ends with the connection (unless a refusal answered first), or as the app
    // closes, so a span the shutdown outran is still exported.
    if (isUpgrade(request)) {
      upgraded.add(span);
      request.raw.socket.once('close', () => {
        closed(span);
      });
    }
    context.with(trace.setSpan(parent, span), done);
  });

  app.addHook('onResponse', (request, reply, done) => {
    // An upgraded WebSocket tail may pass here before its connection closes, with the
    // status Fastify left on its reply: its span is the connection's (above). A refusal
    // answered before any upgrade ends it here.
    if (!(isUpgrade(request) && reply.statusCode < 400)) finish(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    finish(request, 'aborted');
    done();
  });
  app.addHook('onClose', (_app, done) => {
    for (const span of upgraded) closed(span);
    done();
  });
}
