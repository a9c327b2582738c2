/**
 * Part 1 of `npm run bench:turns` (see `turns.ts` for what it measures and why the bare
 * route is its baseline): one row per load, `load` sessions each sending a message and
 * waiting for its `turn.ended` for LOOP_SECONDS (`closedLoopTurns`), then the bare route
 * (`turns-bare.ts`, in a process of its own) driven for BARE_SECONDS by as many
 * closed-loop writers, and the CPU time each process spent meanwhile.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { BareReady } from './turns-bare.ts';
import type { TurnsClient } from './turns-client.ts';
import { cpuSeconds, type Deployment } from './turns-deployment.ts';
import { bareThroughput, closedLoopTurns, quantile, type TurnThroughput } from './turns-load.ts';
import { RowFailure, verdict, type TurnRows } from './turns-rows.ts';
import { sessionsWithTails } from './turns-tail.ts';
import { ms, rate } from './table.ts';

const LOOP_SECONDS = 10;
const BARE_SECONDS = 5;

/** The bare route's process: where it listens, and its pid for its CPU time. */
export interface Bare {
  readonly base: string;
  readonly pid: number;
}

/**
 * Starts the bare route's process on the Redis at `redisUrl`; resolves with it, its base
 * URL and its pid.
 */
export async function startBare(
  redisUrl: string,
): Promise<Bare & { readonly child: ChildProcess }> {
  const child = fork(new URL('./turns-bare.ts', import.meta.url), [], {
    execArgv: ['--disable-warning=ExperimentalWarning'],
    env: { ...process.env, REDIS_URL: redisUrl },
  });
  const [ready] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(() => {
      throw new Error('the bare route exited before it was ready');
    }),
  ])) as [BareReady];
  if (child.pid === undefined) throw new Error('the bare route has no pid');
  return { child, base: `http://127.0.0.1:${ready.port}`, pid: child.pid };
}

/** Part 1, one row: `load` sessions closed-loop, then the bare route with as many writers. */
export async function throughputRow(
  results: TurnRows,
  deployment: Deployment,
  client: TurnsClient,
  bare: Bare,
  load: number,
): Promise<void> {
  await results.row(
    `records landed by turns, ${rate(load)} sessions closed-loop`,
    'rec/s',
    '>= 0.5',
    async () => {
      const tails = await sessionsWithTails(deployment, client, load);
      const cpuBefore = await cpuSeconds(deployment.pid);
      const usersCpuBefore = process.cpuUsage();
      let turns: TurnThroughput | Error;
      try {
        turns = await closedLoopTurns(client, tails, LOOP_SECONDS);
      } catch (error) {
        turns = error instanceof Error ? error : new Error(String(error));
      } finally {
        for (const tail of tails) tail.close();
      }
      // Over the whole run, warm-up and drain included: CPU per record the tails saw.
      const serviceCpu = (await cpuSeconds(deployment.pid)) - cpuBefore;
      // This process: the writers and tails of the users, on the same two cores.
      const usersUsed = process.cpuUsage(usersCpuBefore);
      const usersCpu = (usersUsed.user + usersUsed.system) / 1e6;
      const serviceRecords = tails.reduce((sum, tail) => sum + tail.records, 0);
      deployment.check();
      // The baseline runs even after a failure, so the error reads beside what it reached.
      const bareCpuBefore = await cpuSeconds(bare.pid);
      const plain = await bareThroughput(bare.base, load, BARE_SECONDS).catch((error: unknown) =>
        error instanceof Error ? error : new Error(String(error)),
      );
      const bareCpu = (await cpuSeconds(bare.pid)) - bareCpuBefore;
      if (turns instanceof Error) {
        const baseline = plain instanceof Error ? '' : rate(plain.recordsPerSecond);
        const also = plain instanceof Error ? `; the bare route failed too: ${plain.message}` : '';
        throw new RowFailure(`${turns.message}${also}`, baseline, { cause: turns });
      }
      if (plain instanceof Error) throw plain;
      const ratio = turns.recordsPerSecond / plain.recordsPerSecond;
      const cpuPerRecord = (seconds: number, records: number) =>
        ((seconds * 1000) / records).toFixed(3);
      return [
        rate(turns.recordsPerSecond),
        rate(plain.recordsPerSecond),
        ratio.toFixed(3),
        `>= 0.5 ${verdict(ratio >= 0.5)}`,
        `${turns.turnsPerSecond.toFixed(1)} turns/s, ${turns.recordsPerTurn.toFixed(2)} rec/turn; ` +
          `send -> turn.ended p50 ${ms(quantile(turns.turnMs, 0.5))}, ` +
          `p99 ${ms(quantile(turns.turnMs, 0.99))}, max ${ms(quantile(turns.turnMs, 1))} ms; ` +
          `CPU ms/rec service ${cpuPerRecord(serviceCpu, serviceRecords)}, ` +
          `users ${cpuPerRecord(usersCpu, serviceRecords)}, ` +
          `bare ${cpuPerRecord(bareCpu, plain.records)}`,
      ];
    },
  );
}
