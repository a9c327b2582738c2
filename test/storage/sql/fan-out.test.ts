/**
 * The shared reader of SQL tails, on both engines: the tails of one
 * stream share one feed per store instance, so reads do not grow with the number of
 * tails; a tail whose bounded buffer overflows reads the log itself and joins again
 * without gap or duplicate; feeds hear appends of other instances; and appends that
 * answer out of turn still reach every tail in cursor order.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogStore, StoredRecord } from '../../../src/storage/log-store.ts';
import {
  collect,
  cursorsOf,
  eventually,
  oneOff,
  pendingRecord,
  range,
  sleep,
  within,
} from '../../contracts/log-store-fixture.ts';
import { postgresEngine, sqliteEngine, type CountedEngine } from './counted-stores.ts';

const TAILS = 100;

/** Consumes a tail in the background: what it saw so far, and when it ended. */
function live(tail: AsyncIterable<StoredRecord>): { seen: StoredRecord[]; done: Promise<void> } {
  const seen: StoredRecord[] = [];
  const done = (async () => {
    for await (const record of tail) seen.push(record);
  })();
  return { seen, done };
}

async function appendOne(store: LogStore, stream: string, text: string): Promise<void> {
  await store.append(oneOff(stream, [pendingRecord(text)]));
}

describe.each([
  ['sqlite', sqliteEngine],
  ['postgres', postgresEngine],
] as const)('sql tails on %s share one reader per stream', (_, makeEngine) => {
  let engine: CountedEngine;
  beforeAll(async () => {
    engine = await makeEngine();
  });
  afterAll(async () => {
    await engine.cleanup();
  });

  it(`serves ${TAILS} tails of one stream without a read per tail per append`, async () => {
    const { store, queries } = await engine.open();
    const stream = `s-${randomUUID()}`;
    const tails = Array.from({ length: TAILS }, () => live(store.tail(stream, { from: 1 })));
    await appendOne(store, stream, 'first');
    await eventually(5000, () => tails.every((t) => t.seen.length === 1), 'the first record');
    await sleep(50);
    const before = queries();
    const appends = 20;
    for (let n = 2; n <= appends + 1; n++) {
      await appendOne(store, stream, `r${n}`);
      await eventually(5000, () => tails.every((t) => t.seen.length === n), `record ${n}`);
    }
    // Same-instance appends are handed over after commit: at most a read per append (a
    // PostgreSQL notification that overtakes its append's answer), never one per tail.
    expect(queries() - before).toBeLessThanOrEqual(appends);
    for (const tail of tails) expect(cursorsOf(tail.seen)).toEqual(range(1, appends + 1));
    await store.close();
    await within(2000, Promise.all(tails.map((t) => t.done)), 'the tails of a closed store');
  });

  it(`reads once per wake for ${TAILS} tails fed by another instance`, async () => {
    const reader = await engine.open();
    const writer = (await engine.open()).store;
    const stream = `s-${randomUUID()}`;
    const tails = Array.from({ length: TAILS }, () => live(reader.store.tail(stream, { from: 1 })));
    await appendOne(writer, stream, 'first');
    await eventually(5000, () => tails.every((t) => t.seen.length === 1), 'the first record');
    await sleep(50);
    const before = reader.queries();
    const appends = engine.name === 'postgres' ? 10 : 2;
    for (let n = 2; n <= appends + 1; n++) {
      await appendOne(writer, stream, `r${n}`);
      await eventually(5000, () => tails.every((t) => t.seen.length === n), `record ${n}`);
    }
    // A notification (or a moved data_version) wakes the one feed, which reads once; the
    // SQLite watch may add one wake when it first takes its baseline.
    expect(reader.queries() - before).toBeLessThanOrEqual(appends + 1);
    for (const tail of tails) expect(cursorsOf(tail.seen)).toEqual(range(1, appends + 1));
    await reader.store.close();
    await within(2000, Promise.all(tails.map((t) => t.done)), 'the tails of a closed store');
  });

  it('delivers every record to a lagging tail with a tiny buffer, and to a quick one', async () => {
    const { store } = await engine.open({ tailBuffer: 2 });
    const stream = `s-${randomUUID()}`;
    const total = 61;
    const quick = live(store.tail(stream, { from: 1, to: total + 1 }));
    const lagging = store.tail(stream, { from: 1, to: total + 1 })[Symbol.asyncIterator]();
    const first = lagging.next();
    await appendOne(store, stream, 'r1');
    const landed = await within(5000, first, 'the first record');
    expect(landed.done === true ? undefined : landed.value.envelope.cursor).toBe(1);
    // Paused at its first record and subscribed, the lagging tail overflows its 2 slots.
    for (let n = 2; n <= 41; n++) await appendOne(store, stream, `r${n}`);
    await eventually(5000, () => quick.seen.length === 41, 'the quick tail keeping up');
    const seen = [1];
    const rest = (async () => {
      for (;;) {
        const step = await lagging.next();
        if (step.done === true) return;
        seen.push(step.value.envelope.cursor);
      }
    })();
    await eventually(5000, () => seen.length === 41, 'the lagging tail catching up');
    // Joined again: later records reach it through the fan-out, batches larger than its
    // buffer through its own reads.
    for (let n = 42; n <= 51; n++) await appendOne(store, stream, `r${n}`);
    for (let n = 52; n <= total; n += 5) {
      await store.append(
        oneOff(
          stream,
          range(n, n + 4).map((i) => pendingRecord(`r${i}`)),
        ),
      );
    }
    await within(5000, rest, 'the lagging tail');
    await within(5000, quick.done, 'the quick tail');
    expect(seen).toEqual(range(1, total));
    expect(cursorsOf(quick.seen)).toEqual(range(1, total));
  });

  it('feeds tails on two instances from appends through both, and ends them on archive', async () => {
    const one = (await engine.open()).store;
    const two = (await engine.open()).store;
    const stream = `s-${randomUUID()}`;
    const tails = [one, two, one, two].map((store) => live(store.tail(stream, { from: 1 })));
    for (let n = 0; n < 6; n++) {
      const through = n % 2 === 0 ? one : two;
      await through.append(oneOff(stream, [pendingRecord(`a${n}`), pendingRecord(`b${n}`)]));
    }
    const final = await two.archive(stream, pendingRecord('end', { producer: 'service:session' }));
    for (const tail of tails) await within(5000, tail.done, 'a tail of the archived stream');
    for (const tail of tails) {
      expect(cursorsOf(tail.seen)).toEqual(range(1, 13));
      expect(tail.seen.at(-1)).toEqual(final);
    }
  });

  it('delivers in cursor order appends that answer out of turn, to tails joining late', async () => {
    const { store } = await engine.open();
    const writer = (await engine.open()).store;
    const stream = `s-${randomUUID()}`;
    const total = 90;
    const early = live(store.tail(stream, { from: 1, to: total + 1 }));
    const late: Promise<StoredRecord[]>[] = [];
    for (let wave = 0; wave < 3; wave++) {
      // Concurrent appends through the tailing instance and another one.
      await Promise.all(
        range(1, 15).flatMap((n) => [
          appendOne(store, stream, `w${wave}-${n}`),
          appendOne(writer, stream, `x${wave}-${n}`),
        ]),
      );
      late.push(collect(store.tail(stream, { from: 1 + wave * 20, to: total + 1 })));
    }
    await within(5000, early.done, 'the early tail');
    expect(cursorsOf(early.seen)).toEqual(range(1, total));
    const joined = await within(5000, Promise.all(late), 'the late tails');
    joined.forEach((seen, wave) => {
      expect(cursorsOf(seen)).toEqual(range(1 + wave * 20, total));
    });
  });
});
