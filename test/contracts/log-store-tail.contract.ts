/**
 * The tail and archive half of the log store contract (interface 3.1, 4.2; decisions
 * rows 60, 68): a tail yields every record once, in cursor order, waits for new ones,
 * and ends after the archiving record, before `to`, on abort, or when its store closes.
 * Registered by `describeLogStore` in `log-store.contract.ts`.
 */
import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { LogStore, StoredRecord } from '../../src/storage/log-store.ts';
import type { Pullable, StepSink } from '../../src/storage/pull.ts';
import {
  batchArb,
  collect,
  cursorsOf,
  eventually,
  expectConflict,
  oneOff,
  pendingRecord,
  range,
  sleep,
  streamId,
  within,
  type LogStoreContext,
} from './log-store-fixture.ts';

/** Consumes a tail in the background; `done` settles when the tail ends. */
function follow(tail: AsyncIterable<StoredRecord>): { seen: StoredRecord[]; done: Promise<void> } {
  const seen: StoredRecord[] = [];
  const done = (async () => {
    for await (const record of tail) seen.push(record);
  })();
  return { seen, done };
}

/** Registers the tail and archive tests in the current `describe`. */
export function describeTails(context: LogStoreContext): void {
  it('delivers every record once, in order, to tails started before, during and after appends', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchArb, { minLength: 2, maxLength: 8 }),
        fc.nat(),
        fc.nat(),
        async (batches, split, lateStart) => {
          const store = context.store();
          const stream = streamId();
          const total = batches.reduce((sum, batch) => sum + batch.length, 0);
          const cut = 1 + (split % (batches.length - 1));
          const before = collect(store.tail(stream, { from: 1, to: total + 1 }));
          const acknowledged: StoredRecord[] = [];
          for (const batch of batches.slice(0, cut)) {
            acknowledged.push(...(await store.append(oneOff(stream, batch))).records);
          }
          const during = collect(store.tail(stream, { from: 0, to: total + 1 }));
          for (const batch of batches.slice(cut)) {
            acknowledged.push(...(await store.append(oneOff(stream, batch))).records);
          }
          const from = 1 + (lateStart % total);
          const after = collect(store.tail(stream, { from, to: total + 1 }));
          expect(await within(5000, before, 'the tail started before')).toEqual(acknowledged);
          expect(await within(5000, during, 'the tail started during')).toEqual(acknowledged);
          expect(await within(5000, after, 'the tail started after')).toEqual(
            acknowledged.slice(from - 1),
          );
        },
      ),
      { numRuns: 8 },
    );
  });

  it('hands records to `deliver` as they land and the rest to the iterator, each once and in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
        async (batches, answers) => {
          const store = context.store();
          const stream = streamId();
          const total = batches.reduce((sum, batch) => sum + batch.length, 0);
          // Each record, whichever way it came: 'd' through deliver, 'i' through the iterator.
          const seen: [number, 'd' | 'i'][] = [];
          let offers = 0;
          const deliver = (record: StoredRecord): boolean => {
            const take = answers[offers++ % answers.length] ?? true;
            if (take) seen.push([record.envelope.cursor, 'd']);
            return take;
          };
          const done = (async () => {
            for await (const record of store.tail(stream, { from: 1, to: total + 2, deliver })) {
              seen.push([record.envelope.cursor, 'i']);
            }
          })();
          // The tail is waiting when the first batch lands.
          await sleep(20);
          for (const batch of batches) {
            await store.append(oneOff(stream, batch));
            // Let the tail catch up and wait, so the next batch finds it waiting.
            await sleep(5);
          }
          const final = await store.archive(stream, pendingRecord('end'));
          await within(5000, done, 'the tail');
          // One arrival order across both ways: every cursor once, in order.
          expect(seen.map(([cursor]) => cursor)).toEqual(range(1, total + 1));
          // The archiving record ends the tail, so it always comes through the iterator.
          expect(seen.at(-1)).toEqual([final.envelope.cursor, 'i']);
          // The first record was offered to `deliver`, and went the way it answered.
          expect(seen[0]).toEqual([1, answers[0] === true ? 'd' : 'i']);
        },
      ),
      { numRuns: 8 },
    );
  });

  it('waits for records that land after it caught up, and ends on abort without throwing', async () => {
    const store = context.store();
    const stream = streamId();
    const abort = new AbortController();
    const tail = follow(store.tail(stream, { from: 1, signal: abort.signal }));
    await sleep(50);
    expect(tail.seen).toEqual([]);
    await store.append(oneOff(stream, [pendingRecord('late')]));
    await eventually(5000, () => tail.seen.length === 1, 'delivery of a late record');
    await store.append(oneOff(stream, [pendingRecord('later'), pendingRecord('latest')]));
    await eventually(5000, () => tail.seen.length === 3, 'delivery of a later batch');
    abort.abort();
    await within(2000, tail.done, 'the aborted tail');
    expect(cursorsOf(tail.seen)).toEqual([1, 2, 3]);
  });

  it('ends a tail returned while it waits: the waiting `next` settles done, and records landing later reach no one', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('first')]));
    const iterator = store.tail(stream, { from: 1 })[Symbol.asyncIterator]();
    const first = await within(5000, iterator.next(), 'the first record');
    expect(first.done === true ? null : first.value.envelope.cursor).toBe(1);
    const waiting = iterator.next();
    await sleep(50);
    await within(2000, Promise.resolve(iterator.return?.()), 'the return');
    expect(await within(2000, waiting, 'the waiting next')).toEqual({
      done: true,
      value: undefined,
    });
    await store.append(oneOff(stream, [pendingRecord('second')]));
    expect(await within(2000, iterator.next(), 'a next after the return')).toEqual({
      done: true,
      value: undefined,
    });
  });

  it('hands its steps to a sink when pulled, parked while it waits: woken by a record, by `return` and by an abort', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('first')]));
    const abort = new AbortController();
    const iterator = store.tail(stream, { from: 1, signal: abort.signal })[Symbol.asyncIterator]();
    // Every store's tail can be pulled: a session tail's transport waits on it that way.
    expect(typeof (iterator as Partial<Pullable<StoredRecord>>).pull).toBe('function');
    const pulled = iterator as Pullable<StoredRecord>;
    const steps: (number | 'done' | 'failed')[] = [];
    let synchronous = true;
    const sink: StepSink<StoredRecord> = {
      took: (step) => {
        if (synchronous) throw new Error('a pull answered before it returned');
        steps.push(step.done === true ? 'done' : step.value.envelope.cursor);
      },
      failed: () => steps.push('failed'),
    };
    pulled.pull(sink);
    synchronous = false;
    await eventually(5000, () => steps.length === 1, 'the first record');
    pulled.pull(sink);
    await sleep(50);
    // Parked: it listens on its reader's signal only while it waits.
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(1);
    await store.append(oneOff(stream, [pendingRecord('second')]));
    await eventually(5000, () => steps.length === 2, 'the record that woke it');
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
    pulled.pull(sink);
    await sleep(20);
    abort.abort();
    await eventually(2000, () => steps.length === 3, 'the abort to wake it');
    expect(steps).toEqual([1, 2, 'done']);
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);

    const tail = store.tail(stream, { from: 3 });
    const returned = tail[Symbol.asyncIterator]() as Pullable<StoredRecord>;
    const ends: unknown[] = [];
    returned.pull({ took: (step) => ends.push(step), failed: (error) => ends.push(error) });
    await sleep(50);
    await returned.return?.();
    await eventually(2000, () => ends.length === 1, 'the return to wake it');
    expect(ends).toEqual([{ done: true, value: undefined }]);
  });

  it('ends at once on a signal aborted before it starts', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('a')]));
    const seen = await within(
      2000,
      collect(store.tail(stream, { from: 1, signal: AbortSignal.abort() })),
      'tail',
    );
    expect(seen).toEqual([]);
  });

  it('ends before the `to` cursor, at once when from is not below to', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(
      oneOff(
        stream,
        range(1, 5).map((n) => pendingRecord(`r${n}`)),
      ),
    );
    expect(
      cursorsOf(await within(2000, collect(store.tail(stream, { from: 2, to: 4 })), 'tail')),
    ).toEqual([2, 3]);
    expect(await within(2000, collect(store.tail(stream, { from: 3, to: 3 })), 'tail')).toEqual([]);
    expect(await within(2000, collect(store.tail(stream, { from: 5, to: 2 })), 'tail')).toEqual([]);
    const waiting = collect(store.tail(stream, { from: 4, to: 8 }));
    await store.append(
      oneOff(
        stream,
        range(6, 9).map((n) => pendingRecord(`r${n}`)),
      ),
    );
    expect(cursorsOf(await within(5000, waiting, 'the tail waiting for its `to`'))).toEqual([
      4, 5, 6, 7,
    ]);
  });

  it('follows appends made through another instance', async () => {
    const other = await context.open();
    const stream = streamId();
    const tail = collect(other.tail(stream, { from: 1, to: 4 }));
    await sleep(50);
    const landed = await context
      .store()
      .append(oneOff(stream, [pendingRecord('a'), pendingRecord('b')]));
    await sleep(20);
    const more = await context.store().append(oneOff(stream, [pendingRecord('c')]));
    expect(await within(5000, tail, 'the tail on another instance')).toEqual([
      ...landed.records,
      ...more.records,
    ]);
  });

  it('ends a tail after delivering the record that archived the stream', async () => {
    const store = context.store();
    const stream = streamId();
    const live = follow(store.tail(stream, { from: 1 }));
    await store.append(oneOff(stream, [pendingRecord('a'), pendingRecord('b')]));
    const final = await (
      await context.open()
    ).archive(stream, pendingRecord('end', { producer: 'service:session' }));
    await within(5000, live.done, 'the tail of an archived stream');
    expect(cursorsOf(live.seen)).toEqual([1, 2, 3]);
    expect(live.seen.at(-1)).toEqual(final);
    const replay = await within(
      2000,
      collect(store.tail(stream, { from: 2 })),
      'a tail after archiving',
    );
    expect(cursorsOf(replay)).toEqual([2, 3]);
    expect(
      await within(2000, collect(store.tail(stream, { from: 4 })), 'a tail past the end'),
    ).toEqual([]);
  });

  it('archives once: a repeat lands nothing and answers the final record', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('a')]));
    const final = await store.archive(
      stream,
      pendingRecord('end', { producer: 'service:session' }),
    );
    expect(final.envelope).toMatchObject({ cursor: 2, stream, producer: 'service:session' });
    expect(final.body).toBe(JSON.stringify({ text: 'end' }));
    expect(await store.archive(stream, pendingRecord('end again'))).toEqual(final);
    expect(await store.head(stream)).toEqual({ head: 2, archived: true });
    await expectConflict(
      () => store.append(oneOff(stream, [pendingRecord('b')])),
      'session_archived',
    );
  });

  it('lands one final record when two instances archive at once', async () => {
    const other = await context.open();
    for (let run = 0; run < 5; run++) {
      const stream = streamId();
      await context.store().append(oneOff(stream, [pendingRecord('a')]));
      const finals = await Promise.all([
        context.store().archive(stream, pendingRecord('by one')),
        other.archive(stream, pendingRecord('by other')),
      ]);
      expect(finals[0]).toEqual(finals[1]);
      expect(finals[0].envelope.cursor).toBe(2);
      expect(await other.head(stream)).toEqual({ head: 2, archived: true });
    }
  });

  it('ends its open tails when the store closes, and closes twice', async () => {
    const store: LogStore = await context.open();
    const stream = streamId();
    const live = follow(store.tail(stream, { from: 1 }));
    await store.append(oneOff(stream, [pendingRecord('a')]));
    await eventually(5000, () => live.seen.length === 1, 'delivery before closing');
    await store.close();
    await within(2000, live.done, 'the tail of a closed store');
    await store.close();
    expect(cursorsOf(live.seen)).toEqual([1]);
  });
}
