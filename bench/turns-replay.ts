/**
 * Part 4 of `npm run bench:turns`: rebuilding a session's turn state by replay.
 *
 * The session is built over HTTP as a user makes one: message after message, each
 * answered by a turn of four records (`message.submitted`, `turn.started`,
 * `model.output`, `turn.ended`), until the log holds `records` records. Each next
 * message is sent once the previous turn has started, so it lands during that turn and
 * is the sole input of the next: the driver goes from turn to turn without resting,
 * which keeps thousands of turns to seconds.
 *
 * Then, in this process, the same stores as the service's (`openStores` on its data
 * folder, database and Redis) and what the runtime does when it takes a session up:
 * `rebuildState` (the session's saved turn state, which the driver wrote while it worked,
 * then the records after it); beside it the replay from cursor 1 (`new SessionState` and
 * `catchUp(log)`: every record read in pages and applied to the turn machine, the reader
 * and the transcript), and the bare read of every record in the same pages (`log.read`,
 * nothing applied). One unmeasured run of each first, then REPEATS of each, alternating;
 * the medians are the figures.
 */
import { performance } from 'node:perf_hooks';
import { systemClock } from '../src/clock.ts';
import { tenantSealKey } from '../src/sessions/sealing.ts';
import { openStores, type Stores } from '../src/storage/open.ts';
import type { LogStore } from '../src/storage/log-store.ts';
import { SessionState } from '../src/turns/session-state.ts';
import { rebuildState } from '../src/turns/state-snapshot.ts';
import type { BenchSession, TurnsClient } from './turns-client.ts';
import type { Deployment } from './turns-deployment.ts';
import { awaitTurn, quantile, TURN_TIMEOUT_MS } from './turns-load.ts';
import { TurnTail } from './turns-tail.ts';

/** Measured runs of each, after one unmeasured run. */
export const REPEATS = 7;
/** The page `SessionState.catchUp` reads (`CATCH_UP_PAGE`), used for the bare read too. */
const PAGE = 1000;

export interface BuiltSession {
  readonly session: BenchSession;
  readonly tenant: string;
  /** Records in its log. */
  readonly head: number;
  readonly turns: number;
  readonly seconds: number;
}

/**
 * Opens a session (handed to `opened` at once, so a failure later still cleans it up)
 * and runs turns in it until its log holds at least `records` records.
 */
export async function buildSession(
  client: TurnsClient,
  records: number,
  opened: (session: BenchSession) => void,
): Promise<BuiltSession> {
  const began = performance.now();
  const { key, tenant } = await client.install();
  const [session] = await client.openSessions(key, 1);
  if (session === undefined) throw new Error('no session opened');
  opened(session);
  const tail = await TurnTail.open(client.base, session, 2);
  try {
    // session.opened, then four records a turn.
    const turns = Math.ceil((records - 1) / 4);
    for (let turn = 0; turn < turns; turn++) {
      const started = tail.next('turn.started');
      await client.send(session, `message ${turn}`);
      await awaitTurn(client, tail, started, 'turn.started');
    }
    const deadline = performance.now() + TURN_TIMEOUT_MS;
    while (tail.ended < turns) {
      if (tail.failure !== null) throw tail.failure;
      if (performance.now() > deadline) {
        throw new Error(`the last turns of ${session.id} hang: ${tail.recent.join(', ')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (tail.ended !== turns || tail.records !== turns * 4) {
      throw new Error(
        `${turns} messages gave ${tail.ended} turns and ${tail.records} records, not ${turns * 4}`,
      );
    }
    const seconds = (performance.now() - began) / 1000;
    return { session, tenant, head: tail.head, turns, seconds };
  } finally {
    tail.close();
  }
}

export interface Replay {
  /** Median ms of `rebuildState`: the saved turn state, then the records after it. */
  readonly rebuildMs: number;
  /** The cursor of the saved state the rebuild started from (0: none). */
  readonly savedAt: number;
  /** Median ms of `new SessionState` + `catchUp`: every record from cursor 1. */
  readonly replayMs: number;
  /** Median ms of reading the same records in the same pages. */
  readonly readMs: number;
  /** Every measured run, ms, ascending. */
  readonly rebuilds: readonly number[];
  readonly replays: readonly number[];
  readonly reads: readonly number[];
}

async function replayOnce(log: LogStore, built: BuiltSession, key: Buffer): Promise<number> {
  const began = performance.now();
  const state = new SessionState(built.session.id, key);
  await state.catchUp(log);
  const ms = performance.now() - began;
  if (state.head !== built.head || state.phase !== 'idle') {
    throw new Error(`replay reached ${state.head} (${state.phase}), not ${built.head} (idle)`);
  }
  return ms;
}

async function rebuildOnce(
  stores: Pick<Stores, 'work' | 'log'>,
  built: BuiltSession,
  key: Buffer,
): Promise<number> {
  const began = performance.now();
  const state = await rebuildState(stores.work, stores.log, built.session.id, key);
  const ms = performance.now() - began;
  if (state.head !== built.head || state.phase !== 'idle') {
    throw new Error(`rebuild reached ${state.head} (${state.phase}), not ${built.head} (idle)`);
  }
  return ms;
}

async function readOnce(log: LogStore, built: BuiltSession): Promise<number> {
  const began = performance.now();
  let read = 0;
  for (;;) {
    const page = await log.read(built.session.id, { from: read + 1, limit: PAGE });
    read += page.length;
    if (page.length < PAGE) break;
  }
  const ms = performance.now() - began;
  if (read !== built.head) throw new Error(`the bare read got ${read} records, not ${built.head}`);
  return ms;
}

/** Times replay and bare read of `built` on the deployment's stores, opened here. */
export async function timeReplay(deployment: Deployment, built: BuiltSession): Promise<Replay> {
  const stores = await openStores({
    dataDir: deployment.dataDir,
    databaseUrl: deployment.databaseUrl,
    redisUrl: deployment.redisUrl,
    secretsKey: deployment.secretsKey,
    clock: systemClock,
  });
  try {
    const key = tenantSealKey(deployment.secretsKey, built.tenant);
    const savedAt = (await stores.work.turnState(built.session.id))?.cursor ?? 0;
    await rebuildOnce(stores, built, key);
    await replayOnce(stores.log, built, key);
    await readOnce(stores.log, built);
    const rebuilds: number[] = [];
    const replays: number[] = [];
    const reads: number[] = [];
    for (let run = 0; run < REPEATS; run++) {
      rebuilds.push(await rebuildOnce(stores, built, key));
      replays.push(await replayOnce(stores.log, built, key));
      reads.push(await readOnce(stores.log, built));
    }
    rebuilds.sort((a, b) => a - b);
    replays.sort((a, b) => a - b);
    reads.sort((a, b) => a - b);
    return {
      rebuildMs: quantile(rebuilds, 0.5),
      savedAt,
      rebuilds,
      replayMs: quantile(replays, 0.5),
      readMs: quantile(reads, 0.5),
      replays,
      reads,
    };
  } finally {
    await stores.close();
  }
}
