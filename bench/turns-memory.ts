/**
 * Part 3 of `npm run bench:turns`: what sessions cost the service process in memory, on
 * a deployment of its own started for this part (so nothing earlier sits in its heap).
 *
 * After a warm-up (WARMUP_SESSIONS sessions that each ran one turn, so the code paths,
 * pools and caches of a turn exist before the first reading), the service's VmRSS is
 * read, then again after `count` sessions were opened (the baseline: sessions that ran
 * no turn), then again after each of those sessions ran one turn (ours: sessions that
 * each ran one turn). Each reading is taken after SETTLE_MS of quiet, twice: VmRSS as it
 * stands, and the RSS the process retains after full collections (`retainedRss`), which
 * leaves out the garbage and heap headroom a burst of requests leaves behind until the
 * collector gets to it. Every turn is watched on the session's tail, opened for the turn
 * and closed after it.
 */
import { performance } from 'node:perf_hooks';
import type { BenchSession, TurnsClient } from './turns-client.ts';
import type { Deployment } from './turns-deployment.ts';
import { awaitTurn } from './turns-load.ts';
import { TurnTail } from './turns-tail.ts';

/** Sessions that each run a turn before the first reading. */
const WARMUP_SESSIONS = 100;
/** Turns in flight at once. */
const PARALLEL = 100;
/** Quiet before each reading: the service's timers and collections settle. */
const SETTLE_MS = 2_000;

/** Bytes of growth from the first reading: RSS as it stands, and RSS and heap as retained. */
export interface Growth {
  readonly standing: number;
  readonly retained: number;
  readonly heap: number;
}

export interface MemoryGrowth {
  /** Growth with the sessions opened, no turn run. */
  readonly opened: Growth;
  /** Growth once every one of them ran a turn. */
  readonly ranTurns: Growth;
  /** The first reading, bytes. */
  readonly start: Growth;
  /** Seconds it took to open the sessions, and to run their turns. */
  readonly openSeconds: number;
  readonly turnSeconds: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One turn in `session`, seen end to end on a tail opened for it. */
async function oneTurn(client: TurnsClient, session: BenchSession): Promise<void> {
  const tail = await TurnTail.open(client.base, session, 2);
  try {
    const ended = tail.next('turn.ended');
    await client.send(session, 'One turn, then rest.');
    await awaitTurn(client, tail, ended, 'turn.ended');
  } finally {
    tail.close();
  }
}

/** Runs one turn in each session, PARALLEL at a time. */
async function oneTurnEach(client: TurnsClient, sessions: readonly BenchSession[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < sessions.length; i = next++) {
      const session = sessions[i];
      if (session !== undefined) await oneTurn(client, session);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

/** RSS as it stands, then as retained, after SETTLE_MS of quiet. */
async function reading(deployment: Deployment): Promise<Growth> {
  await pause(SETTLE_MS);
  const standing = await deployment.rss();
  const retained = await deployment.retained();
  return { standing, retained: retained.rss, heap: retained.heapUsed };
}

const minus = (a: Growth, b: Growth): Growth => ({
  standing: a.standing - b.standing,
  retained: a.retained - b.retained,
  heap: a.heap - b.heap,
});

/** Measures the RSS growth of `count` sessions, opened and then each running one turn. */
export async function memoryGrowth(
  deployment: Deployment,
  client: TurnsClient,
  count: number,
): Promise<MemoryGrowth> {
  const { key } = await client.install();
  const warm = await client.openSessions(key, WARMUP_SESSIONS);
  deployment.track(warm);
  await oneTurnEach(client, warm);
  const start = await reading(deployment);

  let began = performance.now();
  const sessions = await client.openSessions(key, count);
  deployment.track(sessions);
  const openSeconds = (performance.now() - began) / 1000;
  const opened = await reading(deployment);

  began = performance.now();
  await oneTurnEach(client, sessions);
  const turnSeconds = (performance.now() - began) / 1000;
  const ranTurns = await reading(deployment);
  deployment.check();
  return {
    opened: minus(opened, start),
    ranTurns: minus(ranTurns, start),
    start,
    openSeconds,
    turnSeconds,
  };
}
