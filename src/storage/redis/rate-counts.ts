/**
 * Rate-limit counts kept in Redis and taken several at a time (`scripts/count-1.lua`):
 * one fixed window per bucket, its count one key, so on a Cluster a bucket lives on the
 * master of its slot and the script touches that slot only.
 */
import type { Result } from 'ioredis';
import { scriptDefinition, type LogClient } from './scripts.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `scripts/count-1.lua`: see its header. */
    rateCount(key: string, take: number, windowMs: number): Result<unknown, Context>;
  }
}

const SCRIPT = scriptDefinition('count-1.lua');

/** What a take found: the bucket's count after it, and its window's time left in ms. */
export interface CountTaken {
  readonly count: number;
  readonly ttl: number;
}

/** Defines the script as a command on `client` (EVALSHA, EVAL once when not loaded). */
export function defineRateCount(client: LogClient): void {
  client.defineCommand('rateCount', SCRIPT);
}

/** Adds `take` to the count of `key` in its window (opened now if it has none). */
export async function takeCounts(
  client: LogClient,
  key: string,
  take: number,
  windowMs: number,
): Promise<CountTaken> {
  const reply = await client.rateCount(key, take, windowMs);
  if (!Array.isArray(reply) || typeof reply[0] !== 'number' || typeof reply[1] !== 'number') {
    throw new Error(`rate count script answered ${JSON.stringify(reply)}`);
  }
  return { count: reply[0], ttl: reply[1] };
}
