/**
 * How the SQL log store writes appends. On both engines, appends to many sessions
 * submitted together go in one write, each batch of a group is still answered on its
 * own, and `at` never goes back along a session, whatever the clock or a replay does. On
 * PostgreSQL an append is one statement, two instances writing the same sessions in
 * opposite orders never deadlock, and the tails of another instance take the records
 * from the notification without reading them, on every way an append lands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import type { StoredRecord } from '../../../src/storage/log-store.ts';
import {
  cursorsOf,
  eventually,
  expectConflict,
  oneOff,
  pendingRecord,
  range,
  sleep,
  streamId,
} from '../../contracts/log-store-fixture.ts';
import { postgresEngine, sqliteEngine, type CountedEngine } from './counted-stores.ts';

function useEngine(make: () => Promise<CountedEngine>): () => CountedEngine {
  let engine: CountedEngine | undefined;
  beforeAll(async () => {
    engine = await make();
  });
  afterAll(async () => {
    await engine?.cleanup();
  });
  return () => {
    if (engine === undefined) throw new Error('the engine is not set up');
    return engine;
  };
}

describe.each([
  ['sqlite', sqliteEngine],
  ['postgres', postgresEngine],
] as const)('appends on %s', (_, makeEngine) => {
  const engine = useEngine(makeEngine);

  it('lands appends to many sessions submitted together in one write', async () => {
    const { store, writes } = await engine().open();
    const streams = Array.from({ length: 40 }, streamId);
    const before = writes();
    const results = await Promise.all(
      streams.map((stream, i) => store.append(oneOff(stream, [pendingRecord(`r${i}`)]))),
    );
    expect(writes() - before).toBe(1);
    for (const [i, result] of results.entries()) {
      expect(result.outcome).toBe('landed');
      expect(result.records.map((r) => [r.envelope.stream, r.envelope.cursor])).toEqual([
        [streams[i], 1],
      ]);
      expect(await store.read(streams[i] ?? '', { from: 1 })).toEqual(result.records);
    }
  });

  it('answers each batch of a group on its own: a refusal or a bad record fails only its batch', async () => {
    const { store, writes } = await engine().open();
    const archived = streamId();
    await store.append(oneOff(archived, [pendingRecord('a')]));
    await store.archive(archived, pendingRecord('end'));
    const keyed = streamId();
    const held = await store.append({
      stream: keyed,
      records: [pendingRecord('k')],
      key: 'k1',
      fingerprint: 'f1',
    });
    const [good, bad, later] = [streamId(), streamId(), streamId()];
    // Not an integer: the write of the whole group fails on it.
    const broken = pendingRecord('bad', { kind: { name: 'message.submitted', version: 1.5 } });
    const before = writes();
    const settled = await Promise.allSettled([
      store.append(oneOff(good, [pendingRecord('g')])),
      store.append(oneOff(archived, [pendingRecord('late')])),
      store.append({ stream: keyed, records: [pendingRecord('x')], key: 'k1', fingerprint: 'f2' }),
      store.append({ stream: keyed, records: [pendingRecord('k')], key: 'k1', fingerprint: 'f1' }),
      store.append(oneOff(bad, [broken])),
      store.append(oneOff(later, [pendingRecord('l1'), pendingRecord('l2')])),
    ]);
    const [landed, archivedRefusal, conflict, replay, failed, landedToo] = settled;
    expect(landed).toMatchObject({ status: 'fulfilled', value: { outcome: 'landed' } });
    expect(archivedRefusal).toMatchObject({
      status: 'rejected',
      reason: { code: 'session_archived' },
    });
    expect(conflict).toMatchObject({
      status: 'rejected',
      reason: { code: 'idempotency_conflict' },
    });
    expect(replay).toEqual({
      status: 'fulfilled',
      value: { outcome: 'replayed', records: held.records },
    });
    expect(failed.status).toBe('rejected');
    expect(landedToo).toMatchObject({ status: 'fulfilled', value: { outcome: 'landed' } });
    // The group failed whole on the bad record, then each batch went again on its own.
    expect(writes() - before).toBe(1 + settled.length);
    expect(await store.head(bad)).toBeNull();
    expect(await store.head(good)).toEqual({ head: 1, archived: false });
    expect(await store.head(later)).toEqual({ head: 2, archived: false });
    expect(await store.head(keyed)).toEqual({ head: 1, archived: false });
    expect(await store.head(archived)).toEqual({ head: 2, archived: true });
  });

  it('keeps `at` from going back, and moves nothing with a call that only replays', async () => {
    const clock = new ManualClock(1_000);
    const { store } = await engine().open({ clock });
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('opened')]));
    const keyed = { stream, records: [pendingRecord('k')], key: 'k1', fingerprint: 'f1' };
    const held = await store.append(keyed);
    clock.set(5_000);
    expect(await store.append(keyed)).toEqual({ outcome: 'replayed', records: held.records });
    await expectConflict(
      () => store.append({ ...keyed, fingerprint: 'f2' }),
      'idempotency_conflict',
    );
    expect(await store.head(stream)).toEqual({ head: 2, archived: false });
    // The clock steps back: `at` holds at the last landed record's, not the replay's.
    clock.set(500);
    const stepped = await store.append(oneOff(stream, [pendingRecord('stepped')]));
    clock.set(2_000);
    const later = await store.append({ ...keyed, key: 'k2', records: [pendingRecord('l')] });
    expect([...stepped.records, ...later.records].map((r) => r.envelope)).toMatchObject([
      { cursor: 3, at: 1_000 },
      { cursor: 4, at: 2_000 },
    ]);
    expect(cursorsOf(await store.read(stream, { from: 1 }))).toEqual(range(1, 4));
  });
});

describe('postgres appends', () => {
  const engine = useEngine(postgresEngine);

  it('lands an append in one statement, outside any transaction', async () => {
    const { store, writes, statements } = await engine().open();
    const [statementsBefore, writesBefore] = [statements(), writes()];
    const result = await store.append(oneOff(streamId(), [pendingRecord('a'), pendingRecord('b')]));
    expect(cursorsOf(result.records)).toEqual([1, 2]);
    expect(statements() - statementsBefore).toBe(1);
    expect(writes() - writesBefore).toBe(1);
  });

  it('never deadlocks two instances appending to the same sessions in opposite orders', async () => {
    const [one, two] = [await engine().open(), await engine().open()];
    const streams = Array.from({ length: 8 }, streamId);
    const rounds = 10;
    const before = [one.statements(), two.statements()];
    for (let round = 0; round < rounds; round++) {
      await Promise.all([
        ...streams.map((stream) => one.store.append(oneOff(stream, [pendingRecord('one')]))),
        ...streams
          .toReversed()
          .map((stream) => two.store.append(oneOff(stream, [pendingRecord('two')]))),
      ]);
    }
    // One call per instance per round: none was retried after a deadlock.
    expect([one.statements() - (before[0] ?? 0), two.statements() - (before[1] ?? 0)]).toEqual([
      rounds,
      rounds,
    ]);
    for (const stream of streams) {
      expect(cursorsOf(await one.store.read(stream, { from: 1 }))).toEqual(range(1, 2 * rounds));
    }
  });

  it("feeds another instance's tails from the notifications, without reading the records", async () => {
    const reader = await engine().open();
    const writer = (await engine().open()).store;
    const stream = streamId();
    const seen: StoredRecord[] = [];
    const abort = new AbortController();
    const done = (async () => {
      for await (const record of reader.store.tail(stream, { from: 1, signal: abort.signal })) {
        seen.push(record);
      }
    })();
    await writer.append(oneOff(stream, [pendingRecord('first')]));
    await eventually(5000, () => seen.length === 1, 'the first record');
    await sleep(50);
    const before = reader.queries();
    const landed: StoredRecord[] = [];
    for (let n = 2; n <= 11; n++) {
      landed.push(...(await writer.append(oneOff(stream, [pendingRecord(`r${n}`)]))).records);
      await eventually(5000, () => seen.length === n, `record ${n}`);
    }
    expect(reader.queries() - before).toBe(0);
    expect(seen.slice(1)).toEqual(landed);
    abort.abort();
    await done;
  });

  it('carries the records of keyed appends and of several batches of one session in one call', async () => {
    const reader = await engine().open();
    const writer = (await engine().open()).store;
    // A name whose JSON needs escapes: the listener reads it before the records.
    const stream = `odd "name" \\ ü 日本 ${streamId()}`;
    const seen: StoredRecord[] = [];
    const abort = new AbortController();
    const done = (async () => {
      for await (const record of reader.store.tail(stream, { from: 1, signal: abort.signal })) {
        seen.push(record);
      }
    })();
    const first = await writer.append(oneOff(stream, [pendingRecord('first')]));
    await eventually(5000, () => seen.length === 1, 'the first record');
    await sleep(50);
    const before = reader.queries();
    const keyed = (text: string) => ({
      stream,
      records: [pendingRecord(text)],
      key: text,
      fingerprint: text,
    });
    const results = [
      first,
      await writer.append(keyed('keyed')),
      // Submitted together, so one call lands both: unkeyed, then a key among them.
      ...(await Promise.all([
        writer.append(oneOff(stream, [pendingRecord('a1'), pendingRecord('a2')])),
        writer.append(oneOff(stream, [pendingRecord('b')])),
      ])),
      ...(await Promise.all([
        writer.append(keyed('c')),
        writer.append(oneOff(stream, [pendingRecord('d')])),
      ])),
    ];
    const landed = results.flatMap((result) => result.records);
    expect(cursorsOf(landed)).toEqual(range(1, 7));
    await eventually(5000, () => seen.length === landed.length, 'every record');
    expect(reader.queries() - before).toBe(0);
    expect(seen).toEqual(landed);
    expect(await writer.read(stream, { from: 1 })).toEqual(landed);
    abort.abort();
    await done;
  });
});
