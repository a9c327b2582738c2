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
