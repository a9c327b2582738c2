import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BODY_PROBLEMS, problemResponses } from '../../src/http/openapi-responses.ts';
import { Unauthenticated } from '../../src/errors.ts';
import { requireBearer } from '../../src/auth/bearer.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

// A probe route: a JSON body route that keeps each body only when its handler runs, so
// "a failed request writes nothing" can be observed (the real routes keep theirs in the
// stores; test/http/sessions/append-errors.test.ts holds the append route to the same).
const Probe = z.object({ name: z.string().max(8), count: z.int().min(1) }).strict();

let harness: TestApp;
let app: FastifyInstance;
/** The bodies the probe's handler took, in order. */
const written: unknown[] = [];

beforeAll(async () => {
  harness = await startTestApp({
    routes: (instance) => {
      instance.withTypeProvider<ZodTypeProvider>().post(
        '/probe',
        {
          schema: {
            body: Probe,
            response: {
              200: z.object({ cursor: z.int() }),
              ...problemResponses(...BODY_PROBLEMS, 401),
            },
          },
        },
        (request) => {
          requireBearer(request.headers.authorization);
          written.push(request.body);
          return Promise.resolve({ cursor: written.length });
        },
      );
    },
  });
  app = harness.app;
});
afterAll(async () => {
  await harness.close();
});

function landed(): Promise<number> {
  return Promise.resolve(written.length);
}

function problem(response: { headers: Record<string, unknown>; json: () => unknown }) {
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  return response.json() as Record<string, unknown>;
}

describe('errors are RFC 9457 problems', () => {
  it('answers malformed JSON with 400 naming the position', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/probe',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
      payload: '{"name": "x", "count": 1,,}',
    });
    expect(response.statusCode).toBe(400);
    const body = problem(response);
    expect(body).toMatchObject({
      status: 400,
      code: 'malformed_json',
      field: 'body',
      position: 25,
    });
    expect(body.message).toContain('position 25');
    expect(await landed()).toBe(0);
  });

  it('answers a non-JSON content type with 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await app.inject({
        method: 'POST',
        url: '/probe',
        headers: { 'content-type': type, authorization: 'Bearer t' },
        payload: 'name=x',
      });
      expect(response.statusCode, type).toBe(415);
      expect(problem(response)).toMatchObject({
        code: 'unsupported_media_type',
        field: 'headers.content-type',
      });
    }
    expect(await landed()).toBe(0);
  });

  it('answers an oversized body with 413', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/probe',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
      payload: JSON.stringify({ name: 'x', count: 1, pad: 'x'.repeat(harness.bodyLimit) }),
    });
    expect(response.statusCode).toBe(413);
    expect(problem(response)).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(await landed()).toBe(0);
  });

  it('answers a body that breaks the schema with 400 naming the field and reason', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/probe',
      headers: { authorization: 'Bearer t' },
      payload: { name: 'far too long a name', count: 0 },
    });
    expect(response.statusCode).toBe(400);
    const body = problem(response);
    expect(body).toMatchObject({ code: 'invalid_request', field: 'body.name' });
    expect(body.reason).toMatch(/8/);
    expect(body.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'body.count' })]),
    );
    expect(await landed()).toBe(0);
  });

  it('answers an unknown route with a 404 problem', async () => {
    const response = await app.inject({ method: 'GET', url: '/nowhere?x=1' });
    expect(response.statusCode).toBe(404);
    expect(problem(response)).toMatchObject({ code: 'route_not_found', instance: '/nowhere' });
  });

  it('answers 401 with WWW-Authenticate: Bearer (RFC 6750 §3)', async () => {
    const none = await app.inject({
      method: 'POST',
      url: '/probe',
      payload: { name: 'x', count: 1 },
    });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(problem(none)).toMatchObject({ code: 'unauthenticated' });

    const malformed = await app.inject({
      method: 'POST',
      url: '/probe',
      headers: { authorization: 'Basic abc' },
      payload: { name: 'x', count: 1 },
    });
    expect(malformed.statusCode).toBe(401);
    expect(malformed.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    expect(await landed()).toBe(0);
  });

  it('lands the write once the request is good', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/probe',
      headers: { authorization: 'Bearer t' },
      payload: { name: 'x', count: 1 },
    });
    expect(response.statusCode).toBe(200);
    expect(await landed()).toBe(1);
  });

  it('maps a thrown Unauthenticated with its challenge', () => {
    expect(new Unauthenticated('expired', true).headers?.['www-authenticate']).toContain(
      'invalid_token',
    );
  });
});
