import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { OpenApiCheck } from '../support/openapi-check.ts';

let harness: TestApp;

beforeAll(async () => {
  harness = await startTestApp();
});
afterAll(async () => {
  await harness.close();
});

const get = () => harness.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });

describe('GET /.well-known/jwks.json', () => {
  it('serves the public half of the service’s signing key to anyone, cacheable', async () => {
    const response = await get();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const set = response.json<JSONWebKeySet>();
    expect(set).toEqual({
      keys: [
        {
          kty: 'OKP',
          crv: 'Ed25519',
          x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) as unknown,
          kid: harness.keys.signing.kid,
          alg: 'EdDSA',
          use: 'sig',
        },
      ],
    });
    // Never the private part.
    expect(response.body).not.toContain('"d"');
    expect((await get()).body).toBe(response.body);
  });

  it('verifies what the service signs', async () => {
    const set = (await get()).json<JSONWebKeySet>();
    const { token } = await harness.deps.tokens.mint('session', { sub: 'principal:bob' }, 60_000);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(set));
    expect(protectedHeader.kid).toBe(harness.keys.signing.kid);
    expect(payload.sub).toBe('principal:bob');
  });

  it('is in the OpenAPI document, and its answer fits it', async () => {
    const document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<
      Record<string, unknown>
    >();
    const response = await get();
    new OpenApiCheck(document).answer(
      'GET',
      '/.well-known/jwks.json',
      response.statusCode,
      String(response.headers['content-type']),
      response.json(),
    );
    const paths = document.paths as Record<string, { get?: { security?: unknown } }>;
    expect(paths['/.well-known/jwks.json']?.get?.security).toBeUndefined();
  });
});
