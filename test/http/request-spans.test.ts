/**
 * The request span hooks (`src/http/request-spans.ts`) on a bare Fastify app with probe
 * routes, with the SDK's in-memory exporter: one server span per request, named by route
 * template, active through body parsing and the handler, continuing a caller's
 * `traceparent`, and marked as an error on a 5xx answer only.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installRequestSpans } from '../../src/http/request-spans.ts';
import { TraceContextPropagator } from '../../src/telemetry/traceparent.ts';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const contextManager = new AsyncLocalStorageContextManager();
let app: FastifyInstance;

beforeAll(async () => {
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new TraceContextPropagator());
  app = Fastify();
  installRequestSpans(app, provider.getTracer('request-spans-test'));
  // Answers the span active in the handler, after the body was read.
  app.post('/things/:id', async (request) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return { body: request.body, active: trace.getActiveSpan()?.spanContext().spanId ?? null };
  });
  app.get('/unavailable', async (_request, reply) => reply.code(503).send({ down: true }));
  app.get('/refused', async (_request, reply) => reply.code(409).send({ conflict: true }));
  app.get('/broken', () => {
    throw new Error('a secret message that must not show');
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  context.disable();
  propagation.disable();
});
beforeEach(() => {
  exporter.reset();
});

const only = () => {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(1);
  const [span] = spans;
  if (span === undefined) throw new Error('no span');
  return span;
};

describe('request spans', () => {
  it('make one server span per request, active through body parsing and the handler', async () => {
    const answer = await app.inject({ method: 'POST', url: '/things/42?x=1', payload: { a: 1 } });
    expect(answer.statusCode).toBe(200);
    const span = only();
    expect(span.name).toBe('POST /things/:id');
    expect(span.kind).toBe(1); // SpanKind.SERVER
    expect(span.attributes).toEqual({
      'http.request.method': 'POST',
      'url.scheme': 'http',
      'http.route': '/things/:id',
      'http.response.status_code': 200,
    });
    expect(span.status.code).toBe(0); // unset
    expect(answer.json()).toEqual({ body: { a: 1 }, active: span.spanContext().spanId });
    expect(span.parentSpanContext).toBeUndefined();
  });

  it('continue the trace of a caller that sends traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    await app.inject({
      method: 'POST',
      url: '/things/1',
      payload: {},
      headers: { traceparent: `00-${traceId}-${parent}-01` },
    });
    const span = only();
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe(parent);
    expect(span.parentSpanContext?.isRemote).toBe(true);
  });

  it('mark a 5xx answer as an error, and nothing below it', async () => {
    await app.inject({ method: 'GET', url: '/unavailable' });
    const down = only();
    expect(down.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(down.attributes['error.type']).toBe('503');

    exporter.reset();
    await app.inject({ method: 'GET', url: '/broken' });
    const broken = only();
    expect(broken.attributes['http.response.status_code']).toBe(500);
    expect(broken.status.code).toBe(2);
    const recorded = JSON.stringify([broken.name, broken.attributes, broken.events, broken.status]);
    expect(recorded).not.toContain('secret message');

    exporter.reset();
    await app.inject({ method: 'GET', url: '/refused' });
    const refused = only();
    expect(refused.attributes['http.response.status_code']).toBe(409);
    expect(refused.status.code).toBe(0);
    expect(refused.attributes['error.type']).toBeUndefined();
  });

  it('name a request no route matched by its method alone', async () => {
    await app.inject({ method: 'GET', url: '/nowhere/secret-id' });
    const span = only();
    expect(span.name).toBe('GET');
    expect(span.attributes['http.route']).toBeUndefined();
    expect(span.attributes['http.response.status_code']).toBe(404);
    expect(JSON.stringify(span.attributes)).not.toContain('secret-id');
  });
});
