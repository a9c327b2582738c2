/**
 * The runtime's durable timers that users see without a crash (decisions rows 53 and 61):
 * a session no one writes to, and one whose last turn ended, are archived as idle after
 * SESSION_IDLE_ARCHIVE; a live session's day is counted into usage at 00:00 UTC without
 * archiving it. The clock is the service's own (an offset the test moves forward); every
 * call goes over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ShiftedClock } from '../support/shifted-clock.ts';
import type { TurnClient } from './turn-client.ts';
import { kinds, listeningClient, type TailRecord } from './turn-client.ts';

const IDLE_MS = 600;

const lastOf = (records: readonly TailRecord[], name: string): TailRecord | undefined =>
  records.filter((r) => r.envelope.kind.name === name).at(-1);

describe('the idle archive (row 61)', () => {
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    harness = await startTestApp({ turns: { idleArchiveMs: IDLE_MS, sweepMs: 100 } });
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('archives a session no one wrote to, SESSION_IDLE_ARCHIVE after it opened', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    const records = await client.until(opened, (log) => kinds(log).includes('session.archived'));
    expect(kinds(records)).toEqual(['session.opened', 'session.archived']);
    const [first, archived] = records;
    expect(archived?.body).toMatchObject({ by: 'idle' });
    expect(archived?.envelope.at ?? 0).toBeGreaterThanOrEqual((first?.envelope.at ?? 0) + IDLE_MS);
    expect((await client.status(opened)).live.phase).toBe('ended');
  });

  it('counts idleness from the last record: a turn moves the archive later', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS / 2));
    await client.send(opened, 'still here');
    const records = await client.until(opened, (log) => kinds(log).includes('session.archived'));
    expect(kinds(records)).toEqual([
      'session.opened',
      'message.submitted',
      'turn.started',
      'model.output',
      'turn.ended',
      'session.archived',
    ]);
    const ended = lastOf(records, 'turn.ended');
    const archived = lastOf(records, 'session.archived');
    expect(archived?.body).toMatchObject({ by: 'idle' });
    expect(archived?.envelope.at ?? 0).toBeGreaterThanOrEqual((ended?.envelope.at ?? 0) + IDLE_MS);
  });
});

describe('the 00:00 UTC usage checkpoint (row 53)', () => {
  const clock = new ShiftedClock();
  const day = Date.UTC(2030, 0, 1);
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    clock.jumpTo(day + 12 * 3_600_000);
    harness = await startTestApp({ clock, turns: { sweepMs: 100 } });
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  it("counts a live session's day at midnight, and the next day's records at archive", async () => {
    const { key, owner } = await client.install();
    // A second before midnight: the session opens and runs its turn on 2030-01-01.
    clock.jumpTo(day + 86_400_000 - 1000);
    const opened = await client.open(key);
    await client.send(opened, 'just before midnight');
    const records = await client.turnsEnded(opened, 1);
    expect(records.every((r) => r.envelope.at < day + 86_400_000)).toBe(true);

    // Counted once midnight passes, the session still live.
    const signedIn = await client.signIn(owner);
    const row = await client.usageWhen(signedIn, () => true, '2030-01-01');
    const input = records
      .filter((r) => r.envelope.kind.name === 'model.output')
      .reduce((sum, r) => sum + (r.body.usage as { input: number }).input, 0);
    expect(row).toMatchObject({
      day: '2030-01-01',
      events: records.length,
      bytes_archived: records.reduce((sum, r) => sum + r.envelope.size, 0),
      sessions_checkpointed: 1,
      tokens: { simulated: { input, output: expect.any(Number) as number } },
    });
    expect(clock.now()).toBeGreaterThanOrEqual(day + 86_400_000);
    expect((await client.status(opened)).archived).toBe(false);

    // The archive counts what the new day added (session.archived) into that day, once.
    await client.archive(key, opened);
    const log = await client.log(opened);
    const archived = lastOf(log, 'session.archived');
    const next = await client.usageWhen(signedIn, () => true, '2030-01-02');
    expect(next).toMatchObject({
      events: 1,
      bytes_archived: archived?.envelope.size,
      sessions_checkpointed: 1,
    });
    const [again] = await client.usage(signedIn, '2030-01-01');
    expect(again).toEqual(row);
  });
});
