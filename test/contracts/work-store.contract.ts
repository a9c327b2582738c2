/**
 * The work store conformance suite (`src/storage/work-store.ts`): leases, due entries
 * and counted usage.
 *
 * Run by every backend against a real server or file:
 * `describeWorkStore('sqlite', async () => ({ open, openControl, cleanup }))`.
 * Times are the caller's, so nothing here sleeps: a lease expires when a later `now`
 * is passed. Every test uses fresh names; `due` is global, so the test of its order
 * uses times below every other test's and removes its entries when it ends.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlStore, UsageDelta } from '../../src/storage/control-store.ts';
import { sessionLease, type WorkStore } from '../../src/storage/work-store.ts';

/** A backend under test: the suite opens several instances on one server or file. */
export interface WorkStoreFixture {
  /** A new independent work store (its own connections) on the same server or file. */
  open(): Promise<WorkStore>;
  /** A control store on the same database: checkpointed usage is read through it. */
  openControl(): Promise<ControlStore>;
  /** Drops whatever setup made. Every opened store is closed first. */
  cleanup(): Promise<void>;
}

/** The times most tests use; the `due` order test stays below them. */
const T = 1_700_000_000_000;
const DAY = '2026-03-14';

function id(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

function delta(events: number): UsageDelta {
  return {
    events,
    bytesArchived: 10 * events,
    sessionsCheckpointed: 1,
    tokens: { 'model-a': { input: events, output: 2 * events } },
    toolCalls: { search: events },
  };
}

/** Runs the whole work store contract against the backend `setup` makes. */
export function describeWorkStore(name: string, setup: () => Promise<WorkStoreFixture>): void {
  describe(`work store contract: ${name}`, () => {
    let fixture: WorkStoreFixture | undefined;
    let main: WorkStore | undefined;
    let control: ControlStore | undefined;
    const closing: { close(): Promise<void> }[] = [];
    const ready = (): WorkStoreFixture => {
      if (fixture === undefined) throw new Error('the work store fixture is not set up');
      return fixture;
    };
    const open = async (): Promise<WorkStore> => {
      const store = await ready().open();
      closing.push(store);
      return store;
    };
    const store = (): WorkStore => {
      if (main === undefined) throw new Error('the work store fixture is not set up');
      return main;
    };
    const usage = (tenant: string) => {
      if (control === undefined) throw new Error('the work store fixture is not set up');
      return control.readUsage(tenant, DAY, DAY);
    };
    beforeAll(async () => {
      fixture = await setup();
      main = await open();
      control = await ready().openControl();
      closing.push(control);
    });
    afterAll(async () => {
      await Promise.all(closing.map((opened) => opened.close()));
      await fixture?.cleanup();
    });

    describe('leases', () => {
      it('holds a lease for one holder at a time until it expires', async () => {
        const lease = id('lease');
        const other = await open();
        expect(await store().acquireLease(lease, 'a', T, 1000)).toBe(true);
        expect(await other.acquireLease(lease, 'b', T + 1, 1000)).toBe(false);
        expect(await store().acquireLease(lease, 'b', T + 999, 1000)).toBe(false);
        // Expired at exactly `expires`: b takes it over, and a no longer holds it.
        expect(await other.acquireLease(lease, 'b', T + 1000, 1000)).toBe(true);
        expect(await store().acquireLease(lease, 'a', T + 1500, 1000)).toBe(false);
      });

      it('renews a lease for its holder, moving its expiry', async () => {
        const lease = id('lease');
        expect(await store().acquireLease(lease, 'a', T, 1000)).toBe(true);
        expect(await store().acquireLease(lease, 'a', T + 900, 1000)).toBe(true);
        // Held until T + 1900 now, not T + 1000.
        expect(await store().acquireLease(lease, 'b', T + 1500, 1000)).toBe(false);
        expect(await store().acquireLease(lease, 'b', T + 1900, 1000)).toBe(true);
      });

      it('gives a lease to exactly one of many holders racing for it', async () => {
        const lease = id('lease');
        const other = await open();
        const won = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? store() : other).acquireLease(lease, `h${String(i)}`, T, 1000),
          ),
        );
        expect(won.filter(Boolean)).toHaveLength(1);
      });

      it('renews in one step the leases a holder still holds, and only those', async () => {
        const [mine, lapsed, taken] = [id('lease'), id('lease'), id('lease')] as const;
        expect(await store().acquireLease(mine, 'a', T, 100)).toBe(true);
        expect(await store().acquireLease(lapsed, 'a', T, 100)).toBe(true);
        expect(await store().acquireLease(taken, 'a', T, 100)).toBe(true);
        // `taken` lapses and another holder takes it; `lapsed` lapses and nobody does.
        expect(await store().acquireLease(taken, 'b', T + 100, 100)).toBe(true);
        const renewed = await store().renewLeases([mine, lapsed, taken], 'a', T + 150, 100);
        expect(renewed.sort()).toEqual([mine, lapsed].sort());
        // Renewed until T + 250: nobody else takes them before.
        expect(await store().acquireLease(mine, 'b', T + 249, 100)).toBe(false);
        expect(await store().acquireLease(lapsed, 'b', T + 249, 100)).toBe(false);
        expect(await store().acquireLease(taken, 'b', T + 249, 100)).toBe(true);
        expect(await store().renewLeases([], 'a', T, 100)).toEqual([]);
      });

      it('releases a lease only for its holder', async () => {
        const lease = id('lease');
        expect(await store().acquireLease(lease, 'a', T, 1000)).toBe(true);
        await store().releaseLease(lease, 'b');
        expect(await store().acquireLease(lease, 'b', T + 1, 1000)).toBe(false);
        await store().releaseLease(lease, 'a');
        expect(await store().acquireLease(lease, 'b', T + 2, 1000)).toBe(true);
        await store().releaseLease(id('lease'), 'a');
      });
    });

    describe('due entries', () => {
      it('keeps the earlier due time and grows the stamp on every mark', async () => {
        const session = id('s');
        expect(await store().dueEntry(session)).toBeNull();
        const first = await store().markDue(session, T + 500);
        expect(await store().dueEntry(session)).toEqual({ at: T + 500, stamp: first });
        const second = await store().markDue(session, T + 900);
        expect(second).toBeGreaterThan(first);
        expect(await store().dueEntry(session)).toEqual({ at: T + 500, stamp: second });
        const third = await store().markDue(session, T + 100);
        expect(third).toBeGreaterThan(second);
        expect(await store().dueEntry(session)).toEqual({ at: T + 100, stamp: third });
      });

      it('grows the stamp past a removal and never reuses one', async () => {
        const session = id('s');
        const first = await store().markDue(session, T);
        expect(await store().settleDue(session, first, null)).toBe(true);
        expect(await store().dueEntry(session)).toBeNull();
        const second = await store().markDue(session, T + 50);
        expect(second).toBeGreaterThan(first);
        expect(await store().dueEntry(session)).toEqual({ at: T + 50, stamp: second });
        expect(await store().settleDue(session, second, null)).toBe(true);
        expect(await store().settleDue(session, 0, T + 60)).toBe(true);
        const revived = await store().dueEntry(session);
        expect(revived?.at).toBe(T + 60);
        expect(revived?.stamp).toBeGreaterThan(second);
        // The stamp read before the removal no longer matches the revived entry.
        expect(await store().settleDue(session, second, null)).toBe(false);
        expect(await store().markDue(session, T)).toBeGreaterThan(revived?.stamp ?? 0);
      });

      it('settles when the stamp matches and keeps the stamp', async () => {
        const session = id('s');
        const stamp = await store().markDue(session, T);
        expect(await store().settleDue(session, stamp, T + 1000)).toBe(true);
        expect(await store().dueEntry(session)).toEqual({ at: T + 1000, stamp });
        // Settling may move the time later: a mark keeps the earlier, a settle does not.
        expect(await store().settleDue(session, stamp, T + 2000)).toBe(true);
        expect(await store().dueEntry(session)).toEqual({ at: T + 2000, stamp });
      });

      it('refuses a settle whose stamp a later mark replaced', async () => {
        const session = id('s');
        const read = await store().markDue(session, T);
        const marked = await store().markDue(session, T + 10);
        expect(await store().settleDue(session, read, null)).toBe(false);
        expect(await store().settleDue(session, read, T + 5000)).toBe(false);
        expect(await store().dueEntry(session)).toEqual({ at: T, stamp: marked });
        expect(await store().settleDue(session, marked, null)).toBe(true);
        expect(await store().dueEntry(session)).toBeNull();
        expect(await store().settleDue(session, marked, T)).toBe(false);
        expect(await store().dueEntry(session)).toBeNull();
      });

      it('creates with stamp 0 only when no entry is set', async () => {
        const session = id('s');
        expect(await store().settleDue(session, 0, null)).toBe(true);
        expect(await store().dueEntry(session)).toBeNull();
        expect(await store().settleDue(session, 0, T + 7)).toBe(true);
        const created = await store().dueEntry(session);
        expect(created?.at).toBe(T + 7);
        expect(created?.stamp).toBeGreaterThan(0);
        expect(await store().settleDue(session, 0, T + 1)).toBe(false);
        expect(await store().settleDue(session, 0, null)).toBe(false);
        expect(await store().dueEntry(session)).toEqual(created);
        const marked = id('s');
        await store().markDue(marked, T);
        expect(await store().settleDue(marked, 0, T + 1)).toBe(false);
      });

      it('lets exactly one of many settles with the same stamp win', async () => {
        const session = id('s');
        const other = await open();
        const stamp = await store().markDue(session, T);
        const won = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 === 0 ? store() : other).settleDue(session, stamp, null),
          ),
        );
        // A removed entry no longer matches its stamp: one remove, five refusals.
        expect(won.filter(Boolean)).toHaveLength(1);
      });

      it('marks several sessions in one step, each once, at its earliest time', async () => {
        const [a, b] = [id('many'), id('many')] as const;
        const stampA = await store().markDue(a, T + 500);
        await store().markDueMany([
          { session: a, at: T + 300 },
          { session: b, at: T + 200 },
          { session: b, at: T + 100 },
          { session: a, at: T + 400 },
        ]);
        expect(await store().dueEntry(a)).toEqual({ at: T + 300, stamp: stampA + 1 });
        expect(await store().dueEntry(b)).toEqual({ at: T + 100, stamp: 1 });
        // A later time keeps the earlier one; the stamp still grows.
        await store().markDueMany([{ session: b, at: T + 900 }]);
        expect(await store().dueEntry(b)).toEqual({ at: T + 100, stamp: 2 });
        await store().markDueMany([]);
        await store().settleDue(a, stampA + 1, null);
        await store().settleDue(b, 2, null);
      });

      it('lists due sessions earliest first, up to the limit and not after now', async () => {
        // Times below every other test's T, so their entries never show here.
        const base = 1000;
        const sessions = [id('due'), id('due'), id('due'), id('due'), id('due')] as const;
        const [a, b, c, d, e] = sessions;
        await store().markDue(c, base + 40);
        const stampA = await store().markDue(a, base + 30);
        const stampB = await store().markDue(b, base + 10);
        await store().markDue(e, base + 90);
        await store().markDue(d, base + 20);
        try {
          expect(await store().due(base + 40, 10)).toEqual([b, d, a, c]);
          expect(await store().due(base + 40, 2)).toEqual([b, d]);
          expect(await store().due(base + 39, 10)).toEqual([b, d, a]);
          expect(await store().due(base + 9, 10)).toEqual([]);
          expect(await store().due(base + 40, 0)).toEqual([]);
          expect(await store().settleDue(b, stampB, null)).toBe(true);
          expect(await store().settleDue(a, stampA, base + 95)).toBe(true);
          expect(await store().due(base + 100, 10)).toEqual([d, c, e, a]);
        } finally {
          await Promise.all(
            sessions.map(async (session) => {
              const entry = await store().dueEntry(session);
              if (entry !== null) await store().settleDue(session, entry.stamp, null);
            }),
          );
        }
      });
      it('leaves out a due session while its driver holds its lease', async () => {
        const base = 2000;
        const [held, free] = [id('due'), id('due')] as const;
        const stamps = [await store().markDue(held, base), await store().markDue(free, base)];
        const lease = sessionLease(held);
        try {
          expect(await store().acquireLease(lease, 'driver', base, 100)).toBe(true);
          expect(await store().due(base + 50, 10)).toEqual([free]);
          // Expired at `now`: the session is listed again, for whoever takes it over.
          expect((await store().due(base + 100, 10)).sort()).toEqual([held, free].sort());
          await store().releaseLease(lease, 'driver');
          expect((await store().due(base + 50, 10)).sort()).toEqual([held, free].sort());
        } finally {
          await store().settleDue(held, stamps[0] ?? 0, null);
          await store().settleDue(free, stamps[1] ?? 0, null);
        }
      });
    });

    describe('saved turn states', () => {
      it('keeps the latest save and never lets an older one replace it', async () => {
        const session = id('saved');
        expect(await store().turnState(session)).toBeNull();
        await store().saveTurnState(session, 10, 'ten');
        expect(await store().turnState(session)).toEqual({ cursor: 10, state: 'ten' });
        await store().saveTurnState(session, 5, 'five');
        expect(await store().turnState(session)).toEqual({ cursor: 10, state: 'ten' });
        await store().saveTurnState(session, 12, 'twelve');
        expect(await store().turnState(session)).toEqual({ cursor: 12, state: 'twelve' });
        await store().dropTurnState(session);
        expect(await store().turnState(session)).toBeNull();
      });
    });

    describe('counted usage', () => {
      it('moves the counted cursor and adds the usage once per expected cursor', async () => {
        const session = id('s');
        const tenant = id('t');
        expect(await store().countedThrough(session)).toBe(0);
        expect(await store().checkpointUsage(session, 0, 5, tenant, DAY, delta(3))).toBe(true);
        expect(await store().countedThrough(session)).toBe(5);
        // A stale checkpoint (it read 0 too) changes nothing.
        expect(await store().checkpointUsage(session, 0, 7, tenant, DAY, delta(100))).toBe(false);
        expect(await store().checkpointUsage(session, 4, 7, tenant, DAY, delta(100))).toBe(false);
        expect(await store().countedThrough(session)).toBe(5);
        expect(await usage(tenant)).toEqual([{ day: DAY, ...delta(3) }]);
        expect(await store().checkpointUsage(session, 5, 9, tenant, DAY, delta(2))).toBe(true);
        expect(await store().countedThrough(session)).toBe(9);
        expect(await usage(tenant)).toEqual([
          {
            day: DAY,
            events: 5,
            bytesArchived: 50,
            sessionsCheckpointed: 2,
            tokens: { 'model-a': { input: 5, output: 10 } },
            toolCalls: { search: 5 },
          },
        ]);
      });

      it('refuses a non-zero expectation for a session never counted', async () => {
        const session = id('s');
        const tenant = id('t');
        expect(await store().checkpointUsage(session, 3, 5, tenant, DAY, delta(1))).toBe(false);
        expect(await store().countedThrough(session)).toBe(0);
        expect(await usage(tenant)).toEqual([]);
      });

      it('lets exactly one of many checkpoints from the same cursor count', async () => {
        const tenant = id('t');
        const other = await open();
        let events = 0;
        // From no count (the row is created) and from a count (the row is updated).
        for (const from of [0, 10]) {
          const session = id('s');
          if (from !== 0) {
            await store().checkpointUsage(session, 0, from, tenant, '2026-03-13', delta(1));
          }
          const won = await Promise.all(
            Array.from({ length: 6 }, (_, i) =>
              (i % 2 === 0 ? store() : other).checkpointUsage(
                session,
                from,
                from + 1 + i,
                tenant,
                DAY,
                delta(1 + i),
              ),
            ),
          );
          expect(won.filter(Boolean)).toHaveLength(1);
          const winner = won.indexOf(true);
          expect(await store().countedThrough(session)).toBe(from + 1 + winner);
          events += 1 + winner;
        }
        // The two winners' deltas, each counted once, and nothing of the losers'.
        expect(await usage(tenant)).toEqual([
          {
            day: DAY,
            events,
            bytesArchived: 10 * events,
            sessionsCheckpointed: 2,
            tokens: { 'model-a': { input: events, output: 2 * events } },
            toolCalls: { search: events },
          },
        ]);
      });
    });
  });
}
