/**
 * The log store's Lua scripts: loading them as ioredis commands, calling them, and
 * reading their answer codes; and the reading of any script of `./scripts`, which the
 * rate counts' (`rate-counts.ts`) is read by too.
 *
 * One script per file in `./scripts`, named `<verb>-<numKeys>.lua` and opening with a
 * header that lists KEYS, ARGV and the answers. `defineCommand` sends EVALSHA and falls
 * back to EVAL once when the server does not hold the script yet (after a restart or a
 * SCRIPT FLUSH), so loading needs no round trip of its own.
 */
import { readFileSync } from 'node:fs';
import type { Cluster, Redis, Result } from 'ioredis';
import type { PendingRecord } from '../log-store.ts';
import type { LogRefusal } from '../outcomes.ts';
import { pushBatchArgs, pushRecordArgs, type RawEntry } from './entries.ts';
import type { SessionKeys } from './keys.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `scripts/append-3.lua`: see its header. */
    logAppend(...args: string[]): Result<unknown, Context>;
    /** `scripts/archive-2.lua`: see its header. */
    logArchive(...args: string[]): Result<unknown, Context>;
  }
}

/** What `defineCommand` takes for `./scripts/<file>`: its text, and the keys its name counts. */
export function scriptDefinition(file: string): { lua: string; numberOfKeys: number } {
  const count = /-(\d+)\.lua$/.exec(file)?.[1];
  if (count === undefined) throw new Error(`script ${file} does not name its number of keys`);
  return {
    lua: readFileSync(new URL(`./scripts/${file}`, import.meta.url), 'utf8'),
    numberOfKeys: Number(count),
  };
}

/** The scripts, read from disk once per process. */
const SCRIPTS = [
  { command: 'logAppend', file: 'append-3.lua' },
  { command: 'logArchive', file: 'archive-2.lua' },
].map(({ command, file }) => ({ command, ...scriptDefinition(file) }));

/** What a script did, its numeric code read (the headers list the codes). */
export type ScriptOutcome =
  | { readonly code: 'landed'; readonly cursor: number; readonly at: number }
  | { readonly code: 'replayed'; readonly entries: RawEntry[] }
  | { readonly code: 'refused'; readonly refusal: LogRefusal };

const REFUSALS: Readonly<Record<number, LogRefusal>> = {
  [-1]: 'session_archived',
  [-2]: 'idempotency_conflict',
};

/** A standalone connection or a cluster client: the scripts run on either. */
export type LogClient = Redis | Cluster;

/** Defines the scripts as commands on a connection or cluster client. */
export function defineLogScripts(redis: LogClient): void {
  for (const { command, lua, numberOfKeys } of SCRIPTS) {
    redis.defineCommand(command, { lua, numberOfKeys });
  }
}

/**
 * Runs `append-3.lua`. `at` stamps a fixed time (a frozen clock in tests); undefined
 * takes Redis TIME inside the script (decisions row 13). The script publishes the new
 * head on the session's wake channel, for the readers of every process (`wake-reader.ts`).
 */
export async function runAppend(
  redis: LogClient,
  keys: SessionKeys,
  batch: {
    readonly key: string | null;
    readonly fingerprint: string;
    readonly records: readonly PendingRecord[];
  },
  at: number | undefined,
): Promise<ScriptOutcome> {
  // One array, filled in place (a client's batch of 100 records: 112 arguments).
  const args = [
    keys.meta,
    keys.log,
    keys.keys,
    batch.key === null ? '-' : `+${batch.key}`,
    batch.fingerprint,
    at === undefined ? '' : String(at),
    keys.wake,
  ];
  pushBatchArgs(args, batch.records);
  return readOutcome(await redis.logAppend(...args));
}

/** Runs `archive-2.lua`; `at` and the wake as for `runAppend`. */
export async function runArchive(
  redis: LogClient,
  keys: SessionKeys,
  record: PendingRecord,
  at: number | undefined,
): Promise<ScriptOutcome> {
  const args = [keys.meta, keys.log, at === undefined ? '' : String(at), keys.wake];
  pushRecordArgs(args, record);
  return readOutcome(await redis.logArchive(...args));
}

/** Reads a script's answer; throws on a shape no script answers. */
export function readOutcome(reply: unknown): ScriptOutcome {
  if (Array.isArray(reply)) {
    const [code, first, second] = reply as unknown[];
    if (code === 1 && typeof first === 'number' && typeof second === 'number') {
      return { code: 'landed', cursor: first, at: second };
    }
    if (code === 2 && Array.isArray(first)) {
      return { code: 'replayed', entries: first as RawEntry[] };
    }
    const refusal = typeof code === 'number' ? REFUSALS[code] : undefined;
    if (refusal !== undefined) return { code: 'refused', refusal };
  }
  throw new Error(`log script answered ${JSON.stringify(reply)}, which no script answers`);
}
