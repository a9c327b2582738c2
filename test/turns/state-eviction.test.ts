/**
 * A session's turn state is not kept in memory while the session is idle: once no one has
 * asked for it for a while (the service's clock moved past that here), the process drops
 * it, as the `session_states_live` gauge shows, and the session's status and next turn
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

async function statesHeld(client: TurnClient): Promise<number | undefined> {
  const text = await (await fetch(`${client.base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('agent_sessions_session_states_live '));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
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
      expect(await statesHeld(client)).toBe(0);
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
});
