import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClaimAnswer, ClaimBody, ExecutorSpec } from '../../src/schemas/executor.ts';
import {
  ListSessionsQuery,
  OpenSessionBody,
  OpenSessionRequest,
  PrincipalQuery,
} from '../../src/schemas/sessions.ts';
import { accepted, refusals } from './refusals.ts';

const ed25519 = generateKeyPairSync('ed25519');
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = ed25519.publicKey.export({ type: 'spki', format: 'pem' });
const okpJwk = ed25519.publicKey.export({ format: 'jwk' });
const ecJwk = p256.publicKey.export({ format: 'jwk' });

describe('POST /sessions body (4.1, decisions row 63)', () => {
  it('reads an absent body as {} with rounds defaulted to 16', () => {
    expect(accepted(OpenSessionRequest, undefined)).toEqual({ rounds: 16 });
    expect(accepted(OpenSessionRequest, null)).toEqual({ rounds: 16 });
    expect(accepted(OpenSessionBody, {})).toEqual({ rounds: 16 });
  });

  it('takes rounds 1 and 128 and refuses 0 and 129', () => {
    expect(refusals(OpenSessionBody, { rounds: 1 })).toEqual([]);
    expect(refusals(OpenSessionBody, { rounds: 128 })).toEqual([]);
    for (const rounds of [0, 129]) {
      expect(refusals(OpenSessionBody, { rounds })).toEqual([
        { field: 'body.rounds', reason: 'must be 1 to 128' },
      ]);
    }
    expect(refusals(OpenSessionBody, { rounds: '3' })).toEqual([
      { field: 'body.rounds', reason: 'must be an integer' },
    ]);
  });

  it('bounds instructions at 64 KiB of UTF-8, counting bytes not characters', () => {
    expect(refusals(OpenSessionBody, { instructions: 'a'.repeat(65_536) })).toEqual([]);
    expect(refusals(OpenSessionBody, { instructions: 'a'.repeat(65_537) })).toEqual([
      { field: 'body.instructions', reason: 'must be at most 65536 bytes' },
    ]);
    // 'é' is two bytes: 32,768 of them fill the bound, one more passes it.
    expect(refusals(OpenSessionBody, { instructions: 'é'.repeat(32_768) })).toEqual([]);
    expect(refusals(OpenSessionBody, { instructions: 'é'.repeat(32_769) })).toEqual([
      { field: 'body.instructions', reason: 'must be at most 65536 bytes' },
    ]);
  });

  it('bounds stop at 4 sequences', () => {
    expect(refusals(OpenSessionBody, { params: { stop: ['a', 'b', 'c', 'd'] } })).toEqual([]);
    expect(refusals(OpenSessionBody, { params: { stop: ['a', 'b', 'c', 'd', 'e'] } })).toEqual([
      { field: 'body.params.stop', reason: 'must hold at most 4 sequences' },
    ]);
  });

  it('bounds temperature at 0..2 and top_p at 0..1, null allowed', () => {
    const at = (params: object) => refusals(OpenSessionBody, { params });
    expect(at({ temperature: 0, top_p: 0 })).toEqual([]);
    expect(at({ temperature: 2, top_p: 1 })).toEqual([]);
    expect(at({ temperature: null, top_p: null, max_tokens: null })).toEqual([]);
    expect(at({ temperature: 2.01 })).toEqual([
      { field: 'body.params.temperature', reason: 'must be 0 to 2' },
    ]);
    expect(at({ temperature: -0.01 })).toEqual([
      { field: 'body.params.temperature', reason: 'must be 0 to 2' },
    ]);
    expect(at({ top_p: 1.01 })).toEqual([{ field: 'body.params.top_p', reason: 'must be 0 to 1' }]);
    expect(at({ max_tokens: 0 })).toEqual([
      { field: 'body.params.max_tokens', reason: 'must be at least 1' },
    ]);
  });
});

describe('executor (decisions row 62)', () => {
  it.each([
    ['an SPKI PEM', pem],
    ['an Ed25519 JWK', okpJwk],
    ['a P-256 JWK', ecJwk],
  ])('takes %s', (_name, key) => {
    expect(refusals(ExecutorSpec, { name: 'worker.1', public_key: key })).toEqual([]);
  });

  it('takes a 64-character name and refuses 65 or a bad character', () => {
    const reason = 'must be 1 to 64 characters of A-Z, a-z, 0-9, ., _ and -';
    expect(refusals(ExecutorSpec, { name: 'w'.repeat(64), public_key: pem })).toEqual([]);
    for (const name of ['w'.repeat(65), '', 'w/1', 'w 1']) {
      expect(refusals(ExecutorSpec, { name, public_key: pem })).toEqual([
        { field: 'body.name', reason },
      ]);
    }
  });

  it('refuses a private JWK, naming d', () => {
    const privateJwk = ed25519.privateKey.export({ format: 'jwk' });
    expect(refusals(OpenSessionBody, { executor: { name: 'w', public_key: privateJwk } })).toEqual([
      { field: 'body.executor.public_key.d', reason: 'must not be sent: give the public key only' },
    ]);
  });

  it('refuses a JWK of another curve and text that is not a PEM', () => {
    expect(refusals(ExecutorSpec, { name: 'w', public_key: { ...okpJwk, crv: 'X25519' } })).toEqual(
      [{ field: 'body.public_key.crv', reason: 'must be Ed25519 for kty OKP' }],
    );
    expect(refusals(ExecutorSpec, { name: 'w', public_key: 'ssh-ed25519 AAAA' })).toEqual([
      {
        field: 'body.public_key',
        reason: 'must be an SPKI public key in PEM (-----BEGIN PUBLIC KEY-----)',
      },
    ]);
    expect(refusals(ExecutorSpec, { name: 'w' })).toEqual([
      { field: 'body.public_key', reason: 'is required' },
    ]);
  });
});

describe('principal and directory queries (4.1, decisions rows 40 and 63)', () => {
  it('takes a principal of 256 characters and refuses 257, empty or missing', () => {
    expect(refusals(PrincipalQuery, { principal: 'p'.repeat(256) }, 'query')).toEqual([]);
    expect(refusals(PrincipalQuery, { principal: 'p'.repeat(257) }, 'query')).toEqual([
      { field: 'query.principal', reason: 'must be at most 256 characters' },
    ]);
    expect(refusals(PrincipalQuery, { principal: '' }, 'query')).toEqual([
      { field: 'query.principal', reason: 'must not be empty' },
    ]);
    expect(refusals(PrincipalQuery, {}, 'query')).toEqual([
      { field: 'query.principal', reason: 'is required' },
    ]);
    expect(refusals(PrincipalQuery, { principal: ['a', 'b'] }, 'query')).toEqual([
      { field: 'query.principal', reason: 'must be given once, as text' },
    ]);
  });

  it('defaults limit to 50, keeps 1..200 and clamps above 200', () => {
    expect(accepted(ListSessionsQuery, {}).limit).toBe(50);
    expect(accepted(ListSessionsQuery, { limit: '1' }).limit).toBe(1);
    expect(accepted(ListSessionsQuery, { limit: '200' }).limit).toBe(200);
    expect(accepted(ListSessionsQuery, { limit: '201' }).limit).toBe(200);
    expect(accepted(ListSessionsQuery, { limit: '100000' }).limit).toBe(200);
  });

  it('refuses a limit of 0 or less and one that does not parse', () => {
    for (const limit of ['0', '-1']) {
      expect(refusals(ListSessionsQuery, { limit }, 'query')).toEqual([
        { field: 'query.limit', reason: 'must be at least 1' },
      ]);
    }
    for (const limit of ['', 'ten', '1.5']) {
      expect(refusals(ListSessionsQuery, { limit }, 'query')).toEqual([
        { field: 'query.limit', reason: 'must be an integer' },
      ]);
    }
  });
});

describe('claim (2.17)', () => {
  it('takes a cause cursor from 1', () => {
    expect(refusals(ClaimBody, { cause: 1 })).toEqual([]);
    expect(refusals(ClaimBody, { cause: 0 })).toEqual([
      { field: 'body.cause', reason: 'must be at least 1' },
    ]);
    expect(refusals(ClaimBody, {})).toEqual([{ field: 'body.cause', reason: 'is required' }]);
  });

  it('answers first, again or completed with a nullable grant', () => {
    expect(
      refusals(ClaimAnswer, { attempt: 'completed', credential: null, expires: null }),
    ).toEqual([]);
    expect(refusals(ClaimAnswer, { attempt: 'first', credential: 'jwt', expires: 1 })).toEqual([]);
    expect(refusals(ClaimAnswer, { attempt: 'third', credential: null, expires: null })).toEqual([
      { field: 'body.attempt', reason: 'must be one of first, again, completed' },
    ]);
  });
});
