/**
 * The executor's wire shapes: its name and public key as `POST /sessions` names them
 * (decisions row 62), and the claim body and answer (2.17, 4.2, decisions row 57).
 */
import { z } from 'zod';
import { Cursor, Millis, orMissing } from './common.ts';

/** Decisions row 62: an executor's name; its producer is `executor:<name>`. */
export const ExecutorName = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, {
  error: 'must be 1 to 64 characters of A-Z, a-z, 0-9, ., _ and -',
});

const BASE64URL_32 = /^[A-Za-z0-9_-]{43}$/;
const privateMember = z.never({ error: 'must not be sent: give the public key only' }).optional();

/** An Ed25519 public key as a JWK (RFC 8037). */
const Ed25519Jwk = z.looseObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519', { error: 'must be Ed25519 for kty OKP' }),
  x: z.string().regex(BASE64URL_32, { error: 'must be 32 bytes in base64url' }),
  d: privateMember,
});

/** A P-256 (ES256) public key as a JWK (RFC 7518 §6.2). */
const P256Jwk = z.looseObject({
  kty: z.literal('EC'),
  crv: z.literal('P-256', { error: 'must be P-256 for kty EC' }),
  x: z.string().regex(BASE64URL_32, { error: 'must be 32 bytes in base64url' }),
  y: z.string().regex(BASE64URL_32, { error: 'must be 32 bytes in base64url' }),
  d: privateMember,
});

/** An SPKI public key in PEM armour. */
const SpkiPem = z
  .string()
  .max(4096, { error: 'must be at most 4096 characters' })
  .regex(/^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\s*$/, {
    error: 'must be an SPKI public key in PEM (-----BEGIN PUBLIC KEY-----)',
  });

/**
 * Decisions row 62: the key an executor signs its token requests with (row 65), an
 * Ed25519 or P-256 key as SPKI PEM or JWK. Whether it imports is the route's check.
 */
export const ExecutorPublicKey = z
  .union([SpkiPem, z.discriminatedUnion('kty', [Ed25519Jwk, P256Jwk])], {
    error: orMissing('must be an SPKI PEM string or an Ed25519 (OKP) or P-256 (EC) JWK'),
  })
  .meta({
    id: 'ExecutorPublicKey',
    description: 'An Ed25519 or P-256 public key: SPKI PEM or JWK.',
  });
export type ExecutorPublicKey = z.infer<typeof ExecutorPublicKey>;

/** 4.1 `executor` of `POST /sessions`: who performs the session's tool calls. */
export const ExecutorSpec = z
  .object({ name: ExecutorName, public_key: ExecutorPublicKey })
  .meta({ id: 'ExecutorSpec', description: 'The executor a session addresses its tool calls to.' });
export type ExecutorSpec = z.infer<typeof ExecutorSpec>;

/** 4.2: the record the caller commits to perform, an invoke.allowed addressed to it. */
export const ClaimBody = z
  .object({ cause: Cursor.describe('Cursor of the invoke.allowed record to perform.') })
  .meta({ id: 'ClaimBody', description: 'What an executor claims.' });
export type ClaimBody = z.infer<typeof ClaimBody>;

/** 3.4: first claim, a repeat with no completion behind it, or already answered. */
export const ClaimAttempt = z.enum(['first', 'again', 'completed']);
export type ClaimAttempt = z.infer<typeof ClaimAttempt>;

/** 2.17, decisions row 57: the grant, both members null once the call is completed. */
export const ClaimAnswer = z
  .object({
    attempt: ClaimAttempt,
    credential: z
      .string()
      .nullable()
      .describe('The grant JWT bound to the cause; null when completed.'),
    expires: Millis.nullable().describe('When the grant lapses, Unix ms; null when completed.'),
  })
  .meta({ id: 'ClaimAnswer', description: 'The answer to a claim.' });
export type ClaimAnswer = z.infer<typeof ClaimAnswer>;
