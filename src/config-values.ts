/**
 * The parsers of the environment's values, one per kind of value: each either answers
 * the typed value or adds an issue whose message says what the variable must be, which
 * `parseConfig` reports with the variable's name.
 */
import { z } from 'zod';
import { parseSecretsKeys } from './auth/secrets-keys.ts';
import { OIDC_ALGORITHMS } from './console/oidc.ts';
import { parseAllowList } from './net/addresses.ts';
import { parseTrustProxy } from './net/proxies.ts';
import { parseDuration } from './schemas/duration.ts';
import { parseRedisTarget } from './storage/redis/target.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const port = z.coerce
  .number({ error: 'must be a number' })
  .int('must be an integer')
  .min(0, 'must be 0 to 65535')
  .max(65535, 'must be 0 to 65535');

export const positiveInt = z.coerce
  .number({ error: 'must be a number' })
  .int('must be an integer')
  .positive('must be positive');

export const url = (protocols: readonly string[]) =>
  z
    .url({ error: 'must be a URL' })
    .refine(
      (value) => URL.canParse(value) && protocols.includes(new URL(value).protocol),
      `must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`,
    );

export const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/** A span: a Go duration (`10s`, `1h30m`), or whole days with `d` (`7d`), in ms. */
export const span = z.string().transform((value, ctx) => {
  const days = /^([0-9]+)d$/.exec(value);
  const ms = days === null ? parseDuration(value) : Number(days[1]) * 86_400_000;
  if (ms === null || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: 'must be a positive duration such as 10s, 1h or 7d' });
    return z.NEVER;
  }
  return ms;
});

/** Comma-separated CIDRs, parsed into a `BlockList`. */
export const cidrList = z.string().transform((value, ctx) => {
  try {
    return parseAllowList(value);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: error instanceof Error ? error.message : 'is invalid',
    });
    return z.NEVER;
  }
});

/** Comma-separated JWS algorithms an ID token may be signed with. */
export const algorithmList = z.string().transform((value, ctx) => {
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.find((name) => !(OIDC_ALGORITHMS as readonly string[]).includes(name));
  if (unknown !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `names ${unknown === '' ? 'an empty algorithm' : unknown}; each must be one of ${OIDC_ALGORITHMS.join(', ')}`,
    });
    return z.NEVER;
  }
  return names;
});

/**
 * `REDIS_URL`: a standalone server (`redis://`, `rediss://`) or a Redis Cluster
 * (`redis+cluster://host:port,host:port`, `rediss+cluster://…`), which a WHATWG URL
 * cannot parse; checked here, kept as text for the log store to read again.
 */
export const redisUrl = z.string().superRefine((value, ctx) => {
  try {
    parseRedisTarget(value);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: error instanceof Error ? error.message : 'is invalid',
    });
  }
});

/** `TRUST_PROXY`: off, on, or proxy addresses and CIDRs (`net/proxies.ts`). */
export const trustProxy = z.string().transform((value, ctx) => {
  try {
    return parseTrustProxy(value);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: error instanceof Error ? error.message : 'is invalid',
    });
    return z.NEVER;
  }
});

/** One 32-byte base64url key, or several newest first, comma-separated (a ring). */
export const base64Keys = z.string().refine((value) => {
  try {
    parseSecretsKeys(value);
    return true;
  } catch {
    return false;
  }
}, 'must be 32 bytes in base64url, or several such keys newest first, comma-separated');

/** A secret that travels as `Authorization: Bearer <token>` (RFC 6750 §2.1 b64token). */
export const bearerToken = z
  .string()
  .min(32, 'must be at least 32 characters')
  .regex(
    /^[A-Za-z0-9\-._~+/]+=*$/,
    'must use only bearer-token characters (A-Z a-z 0-9 - . _ ~ + /)',
  );
