/**
 * The idempotency half of the log store contract (decisions row 9): a key holds one
 * batch per stream; an identical resend answers the original envelopes and lands
 * nothing, a different one is refused, and the key is checked before the archive.
 * Registered by `describeLogStore` in `log-store.contract.ts`.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import {
  batchArb,
  cursorsOf,
  expectConflict,
  expectLanded,
  oneOff,
  pendingRecord,
  range,
  streamId,
  type LogStoreContext,
} from './log-store-fixture.ts';

/** Registers the idempotency tests (decisions row 9) in the current `describe`. */
export function describeIdempotency(context: LogStoreContext): void {
  it('replays an identical resend under a key and refuses a different one', async () => {
    const other = await context.open();
    await fc.assert(
      fc.asyncProperty(
        batchArb,
        batchArb,
        fc.string({ minLength: 1, maxLength: 40 }),
        async (batch, otherBatch, key) => {
          const stream = streamId();
          const store = context.store();
          await store.append(oneOff(stream, [pendingRecord('opened')]));
          const first = await store.append({ stream, records: batch, key, fingerprint: 'f1' });
          expect(first.outcome).toBe('landed');
          expectLanded(stream, batch, first.records);
          const again = await other.append({ stream, records: batch, key, fingerprint: 'f1' });
          expect(again).toEqual({ outcome: 'replayed', records: first.records });
          await expectConflict(
            () => other.append({ stream, records: otherBatch, key, fingerprint: 'f2' }),
            'idempotency_conflict',
          );
          expect(await store.head(stream)).toEqual({ head: 1 + batch.length, archived: false });
          expect(await other.readByKey(stream, key)).toEqual(first.records);
          // A key holds one batch per stream: the same key lands afresh on another stream.
          const elsewhere = await store.append({
            stream: streamId(),
            records: otherBatch,
            key,
            fingerprint: 'f2',
          });
          expect(elsewhere.outcome).toBe('landed');
          expect(elsewhere.records[0]?.envelope.cursor).toBe(1);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('holds a key spelled like a marker a backend might use for none ("-", "+", "null")', async () => {
    const store = context.store();
    for (const key of ['-', '+', '+-', 'null', ' ']) {
      const stream = streamId();
      const first = await store.append({
        stream,
        records: [pendingRecord(key)],
        key,
        fingerprint: 'f',
      });
      expect(first.outcome).toBe('landed');
      const again = await store.append({
        stream,
        records: [pendingRecord(key)],
        key,
        fingerprint: 'f',
      });
      expect(again, `the resend under ${JSON.stringify(key)}`).toEqual({
        outcome: 'replayed',
        records: first.records,
      });
      expect(await store.readByKey(stream, key)).toEqual(first.records);
    }
  });

  it('lets exactly one of two racing resends under a key land', async () => {
    const stores = [context.store(), await context.open()];
    await fc.assert(
      fc.asyncProperty(batchArb, async (batch) => {
        const stream = streamId();
        const key = `key-${stream}`;
        const results = await Promise.all(
          stores.map((store) => store.append({ stream, records: batch, key, fingerprint: 'same' })),
        );
        expect(results.map((result) => result.outcome).sort()).toEqual(['landed', 'replayed']);
        expect(results[0]?.records).toEqual(results[1]?.records);
        expect(cursorsOf(results[0]?.records ?? [])).toEqual(range(1, batch.length));
        expect(await stores[0]?.head(stream)).toEqual({ head: batch.length, archived: false });
      }),
      { numRuns: 10 },
    );
  });

  it('answers each of many concurrent appends to one stream on its own: land, replay or refuse', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            batch: batchArb,
            key: fc.option(fc.constantFrom('k1', 'k2', 'k3'), { nil: null }),
            fingerprint: fc.constantFrom('f1', 'f2'),
          }),
          { minLength: 2, maxLength: 12 },
        ),
        async (offers) => {
          const store = context.store();
          const stream = streamId();
          // All at once on one instance: on SQL most of them queue behind the first.
          const settled = await Promise.allSettled(
            offers.map(({ batch, key, fingerprint }) =>
              store.append({ stream, records: batch, key, fingerprint }),
            ),
          );
          const landed: number[] = [];
          const held = new Map<string, { fingerprint: string; cursors: number[] }>();
          // Whatever order the store took them in, a key's batch landed once: the first
          // of its offers the store took, which is the one that answered `landed`.
          settled.forEach((result, i) => {
            const offer = offers[i];
            if (offer === undefined || result.status !== 'fulfilled') return;
            if (result.value.outcome === 'landed') {
              const cursors = cursorsOf(result.value.records);
              landed.push(...cursors);
              if (offer.key !== null) {
                expect(held.has(offer.key)).toBe(false);
                held.set(offer.key, { fingerprint: offer.fingerprint, cursors });
              }
            }
          });
          settled.forEach((result, i) => {
            const offer = offers[i];
            if (offer === undefined) return;
            const holder = offer.key === null ? undefined : held.get(offer.key);
            if (result.status === 'rejected') {
              // Refused: a key held with the other fingerprint.
              expect(result.reason).toMatchObject({ code: 'idempotency_conflict' });
              expect(holder?.fingerprint).not.toBe(offer.fingerprint);
            } else if (result.value.outcome === 'replayed') {
              expect(holder?.fingerprint).toBe(offer.fingerprint);
              expect(cursorsOf(result.value.records)).toEqual(holder?.cursors);
            } else {
              expectLanded(stream, offer.batch, result.value.records);
            }
          });
          // Landed batches hold every cursor from 1 to the head once.
          expect(landed.sort((a, b) => a - b)).toEqual(range(1, landed.length));
          expect(await store.head(stream)).toEqual({ head: landed.length, archived: false });
        },
      ),
      { numRuns: 15 },
    );
  });

  it('checks the key before the archive: a resend after archiving still replays', async () => {
    const store = context.store();
    const stream = streamId();
    const batch = [pendingRecord('a'), pendingRecord('b')];
    const first = await store.append({ stream, records: batch, key: 'k1', fingerprint: 'f1' });
    await store.archive(stream, pendingRecord('end'));
    expect(await store.append({ stream, records: batch, key: 'k1', fingerprint: 'f1' })).toEqual({
      outcome: 'replayed',
      records: first.records,
    });
    await expectConflict(
      () => store.append({ stream, records: batch, key: 'k1', fingerprint: 'f2' }),
      'idempotency_conflict',
    );
    await expectConflict(
      () => store.append({ stream, records: batch, key: 'k2', fingerprint: 'f1' }),
      'session_archived',
    );
    expect(await store.readByKey(stream, 'k2')).toBeNull();
    expect(await store.head(stream)).toEqual({ head: 3, archived: true });
  });

  it('holds nothing under a key whose batch failed', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('a')]));
    await store.archive(stream, pendingRecord('end'));
    await expectConflict(
      () => store.append({ stream, records: [pendingRecord('b')], key: 'k', fingerprint: 'f' }),
      'session_archived',
    );
    expect(await store.readByKey(stream, 'k')).toBeNull();
  });
}
