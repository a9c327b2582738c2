/**
 * The log store conformance suite (interface 2.2 to 2.4; decisions rows 9, 12, 13).
 *
 * Every backend runs it against a real server or file:
 * `describeLogStore('sqlite', async () => ({ open, cleanup }))`. It checks appends, cursors,
 * and reads here, idempotency in `log-store-idempotency.contract.ts`, tails and archiving
 * in `log-store-tail.contract.ts`.
 * Unspecified here, so free for a backend: an empty batch, and `at` beyond being one
 * wall-clock value per batch that never goes back along a stream.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PendingRecord } from '../../src/storage/log-store.ts';
import {
  batchArb,
  sharedBatchArb,
  cursorsOf,
  expectConflict,
  expectLanded,
  oneOff,
  pendingRecord,
  range,
  streamId,
  useLogStores,
  type LogStoreContext,
  type LogStoreFixture,
} from './log-store-fixture.ts';
import { describeIdempotency } from './log-store-idempotency.contract.ts';
import { describeTails } from './log-store-tail.contract.ts';

export type { LogStoreFixture } from './log-store-fixture.ts';

/** Runs the whole log store contract against the backend `setup` makes. */
export function describeLogStore(name: string, setup: () => Promise<LogStoreFixture>): void {
  describe(`log store contract: ${name}`, () => {
    const context = useLogStores(setup);
    describeAppends(context);
    describeIdempotency(context);
    describeTails(context);
  });
}

function describeAppends(context: LogStoreContext): void {
  it('answers its backend name and pings', async () => {
    expect(context.store().backend).toMatch(/^[a-z]+$/);
    await expect(context.store().ping()).resolves.toBeUndefined();
  });

  it('starts a stream at cursor 1 and stamps one `at` on every record of a batch', async () => {
    const store = context.store();
    const stream = streamId();
    const offered = [
      pendingRecord('first'),
      pendingRecord('addressed', {
        to: 'executor:e1',
        idem: 'svc:t1:1',
        producer: 'service:session',
      }),
      pendingRecord('ünïcødé € 😀', { kind: { name: 'turn.started', version: 2 } }),
    ];
    const before = Date.now();
    const result = await store.append(oneOff(stream, offered));
    expect(result.outcome).toBe('landed');
    expect(cursorsOf(result.records)).toEqual([1, 2, 3]);
    expectLanded(stream, offered, result.records);
    const at = result.records[0]?.envelope.at ?? 0;
    expect(Number.isInteger(at)).toBe(true);
    // `at` is wall-clock ms (the store's clock or the server's): near this host's clock.
    expect(Math.abs(at - before)).toBeLessThan(10_000);
    expect(await store.head(stream)).toEqual({ head: 3, archived: false });
    expect(await store.read(stream, { from: 1 })).toEqual(result.records);
  });

  it('answers nothing for a stream nothing has landed on', async () => {
    const stream = streamId();
    expect(await context.store().head(stream)).toBeNull();
    expect(await context.store().read(stream, { from: 0 })).toEqual([]);
    expect(await context.store().readByKey(stream, 'k')).toBeNull();
  });

  it('reads cursor ranges: from inclusive, to exclusive, at most limit', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(
      oneOff(
        stream,
        range(1, 6).map((n) => pendingRecord(`r${n}`)),
      ),
    );
    await store.append(
      oneOff(
        stream,
        range(7, 10).map((n) => pendingRecord(`r${n}`)),
      ),
    );
    const read = async (from: number, to?: number, limit?: number) =>
      cursorsOf(
        await store.read(stream, {
          from,
          ...(to === undefined ? {} : { to }),
          ...(limit === undefined ? {} : { limit }),
        }),
      );
    expect(await read(0)).toEqual(range(1, 10));
    expect(await read(1)).toEqual(range(1, 10));
    expect(await read(3, 6)).toEqual([3, 4, 5]);
    expect(await read(4, undefined, 2)).toEqual([4, 5]);
    expect(await read(9, 100)).toEqual([9, 10]);
    expect(await read(5, 5)).toEqual([]);
    expect(await read(11)).toEqual([]);
    const bodies = (await store.read(stream, { from: 6, to: 8 })).map(
      (r) => JSON.parse(r.body) as unknown,
    );
    expect(bodies).toEqual([{ text: 'r6' }, { text: 'r7' }]);
  });

  it('mints gapless cursors from 1 under concurrent appenders on several instances', async () => {
    const stores = [context.store(), await context.open(), await context.open()];
    await fc.assert(
      fc.asyncProperty(fc.array(batchArb, { minLength: 1, maxLength: 12 }), async (batches) => {
        const stream = streamId();
        const results = await Promise.all(
          batches.map((records, i) =>
            (stores[i % stores.length] ?? context.store()).append(oneOff(stream, records)),
          ),
        );
        results.forEach((result, i) => {
          expect(result.outcome).toBe('landed');
          expectLanded(stream, batches[i] ?? [], result.records);
        });
        const total = batches.reduce((sum, batch) => sum + batch.length, 0);
        const acknowledged = results.flatMap((result) => result.records);
        expect(cursorsOf(acknowledged).sort((a, b) => a - b)).toEqual(range(1, total));
        const stored = await stores[1]?.read(stream, { from: 1 });
        expect(stored).toEqual(
          [...acknowledged].sort((a, b) => a.envelope.cursor - b.envelope.cursor),
        );
        const ats = (stored ?? []).map((record) => record.envelope.at);
        expect(ats).toEqual([...ats].sort((a, b) => a - b));
        expect(await stores[2]?.head(stream)).toEqual({ head: total, archived: false });
      }),
      { numRuns: 12 },
    );
  });

  it("lands batches shaped as a client's, and ones that nearly are, exactly as offered", async () => {
    await fc.assert(
      fc.asyncProperty(sharedBatchArb, async (records) => {
        const stream = streamId();
        const result = await context.store().append(oneOff(stream, records));
        expect(result.outcome).toBe('landed');
        expectLanded(stream, records, result.records);
        expect(await context.store().read(stream, { from: 1 })).toEqual(result.records);
      }),
      { numRuns: 40 },
    );
  });

  it('lands none of a batch when one of its records fails', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('a'), pendingRecord('b')]));
    const broken: PendingRecord = {
      ...pendingRecord('x'),
      get body(): string {
        throw new Error('this body cannot be read');
      },
    };
    const failure = await (async () =>
      store.append(oneOff(stream, [pendingRecord('c'), broken, pendingRecord('d')])))().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(await store.head(stream)).toEqual({ head: 2, archived: false });
    expect(cursorsOf(await store.read(stream, { from: 1 }))).toEqual([1, 2]);
    const next = await store.append(oneOff(stream, [pendingRecord('e')]));
    expect(cursorsOf(next.records)).toEqual([3]);
  });

  it('refuses a batch on an archived stream and lands none of it', async () => {
    const store = context.store();
    const stream = streamId();
    await store.append(oneOff(stream, [pendingRecord('a')]));
    await store.archive(stream, pendingRecord('archived', { producer: 'service:session' }));
    await expectConflict(
      () => store.append(oneOff(stream, [pendingRecord('b'), pendingRecord('c')])),
      'session_archived',
    );
    expect(await store.head(stream)).toEqual({ head: 2, archived: true });
  });

  it('lands each batch racing an archive whole before it, or refuses it whole', async () => {
    const stores = [context.store(), await context.open()];
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchArb, { minLength: 1, maxLength: 8 }),
        fc.nat(8),
        async (batches, archiveAt) => {
          const stream = streamId();
          await stores[0]?.append(oneOff(stream, [pendingRecord('opened')]));
          const appends = batches.map((records, i) =>
            (stores[i % 2] ?? context.store()).append(oneOff(stream, records)),
          );
          const archived = (stores[archiveAt % 2] ?? context.store()).archive(
            stream,
            pendingRecord('end'),
          );
          const settled = await Promise.allSettled(appends);
          const final = await archived;
          const stored = await context.store().read(stream, { from: 1 });
          expect(cursorsOf(stored)).toEqual(range(1, final.envelope.cursor));
          expect(stored.at(-1)).toEqual(final);
          let landed = 1;
          for (const outcome of settled) {
            if (outcome.status === 'rejected') {
              await expectConflict(
                () => Promise.reject(outcome.reason as Error),
                'session_archived',
              );
              continue;
            }
            landed += outcome.value.records.length;
            for (const record of outcome.value.records) {
              expect(record.envelope.cursor).toBeLessThan(final.envelope.cursor);
              expect(stored[record.envelope.cursor - 1]).toEqual(record);
            }
          }
          expect(final.envelope.cursor).toBe(landed + 1);
          expect(await context.store().head(stream)).toEqual({ head: landed + 1, archived: true });
        },
      ),
      { numRuns: 10 },
    );
  });
}
