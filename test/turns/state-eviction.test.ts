/**
 * A session's turn state is not kept in memory while the session is idle: once no one has
 * asked for it for a while (the service's clock moved past that here) and its driver has
 * left, the process drops it, as the `session_states_live` gauge shows, and the session's status and next turn
 * come from a state rebuilt from the stores, the same as a session whose state stayed.
 * Every call goes over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ShiftedClock } from '../support/shifted-clock.ts';
import type { OpenedSession, TailRecord, TurnClient } from './turn-client.ts';
import { kinds, listeningClient } from './turn-client.ts';

/** Longer than the runtime keeps an idle state, and than a driver lingers. */
const IDLE_JUMP_MS = 60_000;
/** Longer than a driver's linger (2 s by default) takes in real time. */
const DRIVER_LEAVES_MS = 10_000;

async function statesHeld(client: TurnClient): Promise<number | undefined> {
  const text = await (await fetch(`${client.base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('agent_sessions_session_states_live '));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Polls the gauge until it reads `expected` or DRIVER_LEAVES_MS passed; answers the last. */
async function statesHeldSettles(
  client: TurnClient,
  expected: number,
): Promise<number | undefined> {
  const deadline = Date.now() + DRIVER_LEAVES_MS;
  let held = await statesHeld(client);
  while (held !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    held = await statesHeld(client);
  }
  return held;
}

const outputs = (records: readonly TailRecord[]) =>
  records.filter((r) => r.envelope.kind.name === 'model.output').map((r) => r.body);

describe('turn states of idle sessions', () => {
  const clock = new ShiftedClock();
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    harness = await startTestApp({ clock });
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  /** Two turns in `opened`, with `between` run after the first ended. */
  async function twoTurns(opened: OpenedSession, between: () => Promise<void>) {
    await client.send(opened, 'the first message');
    await client.turnsEnded(opened, 1);
    const first = await client.status(opened);
    await between();
    const again = await client.status(opened);
    await client.send(opened, 'the second one, a little longer');
    const records = await client.turnsEnded(opened, 2);
    return { first, again, records, last: await client.status(opened) };
  }

  it('drops the state of an idle session and rebuilds it for its status and next turn', async () => {
    const { key } = await client.install();
    const kept = await twoTurns(await client.open(key), () => Promise.resolve());

    const opened = await client.open(key);
    const dropped = await twoTurns(opened, async () => {
      expect(await statesHeld(client)).toBeGreaterThan(0);
      clock.jumpTo(clock.now() + IDLE_JUMP_MS);
      // A state is kept while its driver lingers (a real-time wait): then it goes.
      expect(await statesHeldSettles(client, 0)).toBe(0);
    });

    // The status read after the drop is the one read before it.
    expect(dropped.again).toEqual(dropped.first);
    expect(dropped.again.live).toMatchObject({ phase: 'idle', turn: null });
    // The next turn ran on the rebuilt state: the same records and prompt as on a kept one.
    expect(kinds(dropped.records)).toEqual(kinds(kept.records));
    expect(outputs(dropped.records)).toEqual(outputs(kept.records));
    // (`since`, when the phase began, is the clock's: later here.)
    expect({ ...dropped.last.live, since: 0 }).toEqual({ ...kept.last.live, since: 0 });
    expect(dropped.last.live.prompt_tokens).toBeGreaterThan(dropped.first.live.prompt_tokens);
  });

  it('keeps the state of a session whose driver runs, however long ago it was asked for', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    // The simulated model answers in ten minutes: the driver stays in the turn.
    await client.send(opened, '/slow 600000');
    await client.until(opened, (log) => kinds(log).includes('turn.started'));
    clock.jumpTo(clock.now() + IDLE_JUMP_MS);
    // Past any other driver's linger: the states left are those of running drivers.
    await new Promise((resolve) => setTimeout(resolve, DRIVER_LEAVES_MS / 2));
    expect(await statesHeld(client)).toBe(1);
    await client.cancel(opened);
    await client.turnsEnded(opened, 1);
  });
});
