/**
 * The control store conformance suite: versioned resources, batches, races and indexes
 * here; secrets, snapshots and usage in `control-store-records.contract.ts`.
 *
 * Run by every backend against a real server or file:
 * `describeControlStore('sqlite', async () => ({ open, atRest, cleanup }))`.
 * `write` answers one resource per put, in order; a delete answers nothing. An absent
 * `index` keeps a resource's entries; `{}` clears them.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlStore } from '../../src/storage/control-store.ts';
import { describeControlRecords } from './control-store-records.contract.ts';
import { describeRetention } from './control-store-retention.contract.ts';
import {
  put,
  scopeId,
  type ControlStoreContext,
  type ControlStoreFixture,
} from './control-store-fixture.ts';
import { expectConflict } from './log-store-fixture.ts';

export type { ControlStoreFixture } from './control-store-fixture.ts';

/** Runs the whole control store contract against the backend `setup` makes. */
export function describeControlStore(
  name: string,
  setup: () => Promise<ControlStoreFixture>,
): void {
  describe(`control store contract: ${name}`, () => {
    let fixture: ControlStoreFixture | undefined;
    const opened: ControlStore[] = [];
    const ready = (): ControlStoreFixture => {
      if (fixture === undefined) throw new Error('the control store fixture is not set up');
      return fixture;
    };
    const open = async (): Promise<ControlStore> => {
      const store = await ready().open();
      opened.push(store);
      return store;
    };
    beforeAll(async () => {
      fixture = await setup();
      await open();
    });
    afterAll(async () => {
      await Promise.all(opened.map((store) => store.close()));
      await fixture?.cleanup();
    });
    const context: ControlStoreContext = {
      store: () => {
        const [main] = opened;
        if (main === undefined) throw new Error('the control store fixture is not set up');
        return main;
      },
      open,
      atRest: () => ready().atRest(),
    };
    describeResources(context);
    describeIndexes(context);
    describeControlRecords(context);
    describeRetention(context);
  });
}

function describeResources(context: ControlStoreContext): void {
  it('creates at version 1, adds one per write and keeps created', async () => {
    const store = context.store();
    const scope = scopeId();
    expect(await store.get('tenant', scope, 'x')).toBeNull();
    const [created] = await store.write([put('tenant', scope, 'x', { name: 'Acme' }, 0)]);
    expect(created).toMatchObject({
      kind: 'tenant',
      scope,
      id: 'x',
      version: 1,
      value: { name: 'Acme' },
    });
    expect(created?.created).toBe(created?.updated);
    expect(Math.abs((created?.created ?? 0) - Date.now())).toBeLessThan(10_000);
    expect(await store.get('tenant', scope, 'x')).toEqual(created);
    const [second] = await store.write([put('tenant', scope, 'x', { name: 'Acme 2' }, 1)]);
    expect(second).toMatchObject({
      version: 2,
      created: created?.created,
      value: { name: 'Acme 2' },
    });
    expect(second?.updated).toBeGreaterThanOrEqual(created?.updated ?? 0);
    const [third] = await store.write([put('tenant', scope, 'x', { name: 'Acme 3' }, null)]);
    expect(third).toMatchObject({ version: 3, value: { name: 'Acme 3' } });
    const [fresh] = await store.write([put('tenant', scope, 'y', [1, 'two', null], null)]);
    expect(fresh).toMatchObject({ version: 1, value: [1, 'two', null] });
    expect(await (await context.open()).get('tenant', scope, 'x')).toEqual(third);
  });

  it('refuses a write whose version check fails and changes nothing', async () => {
    const store = context.store();
    const scope = scopeId();
    const [held] = await store.write([put('install', scope, 'i', { n: 1 }, 0)]);
    await expectConflict(
      () => store.write([put('install', scope, 'i', { n: 2 }, 0)]),
      'version_conflict',
    );
    await expectConflict(
      () => store.write([put('install', scope, 'i', { n: 2 }, 5)]),
      'version_conflict',
    );
    await expectConflict(
      () => store.write([put('install', scope, 'absent', { n: 2 }, 1)]),
      'version_conflict',
    );
    const wrongDelete = { op: 'delete', kind: 'install', scope, id: 'i', expect: 2 } as const;
    await expectConflict(() => store.write([wrongDelete]), 'version_conflict');
    expect(await store.get('install', scope, 'i')).toEqual(held);
    expect(await store.get('install', scope, 'absent')).toBeNull();
  });

  it('deletes with and without a version check; deleting nothing is no error', async () => {
    const store = context.store();
    const scope = scopeId();
    await store.write([put('proposal', scope, 'a', {}, 0), put('proposal', scope, 'b', {}, 0)]);
    expect(
      await store.write([{ op: 'delete', kind: 'proposal', scope, id: 'a', expect: 1 }]),
    ).toEqual([]);
    expect(
      await store.write([{ op: 'delete', kind: 'proposal', scope, id: 'b', expect: null }]),
    ).toEqual([]);
    expect(
      await store.write([{ op: 'delete', kind: 'proposal', scope, id: 'never', expect: null }]),
    ).toEqual([]);
    expect(await store.list('proposal', scope)).toEqual([]);
    const [again] = await store.write([put('proposal', scope, 'a', { again: true }, 0)]);
    expect(again?.version).toBe(1);
  });

  it('applies a batch whole or not at all', async () => {
    const store = context.store();
    const scope = scopeId();
    const [c] = await store.write([put('connection', scope, 'c', { v: 1 }, 0)]);
    await expectConflict(
      () =>
        store.write([
          put('connection', scope, 'a', { v: 1 }, 0),
          put('membership', scope, 'b', { v: 1 }, 0, { user: ['u1'] }),
          { op: 'delete', kind: 'connection', scope, id: 'c', expect: 1 },
          put('connection', scope, 'c', { v: 2 }, 9),
        ]),
      'version_conflict',
    );
    expect(await store.get('connection', scope, 'a')).toBeNull();
    expect(await store.get('membership', scope, 'b')).toBeNull();
    expect(await store.findByIndex('membership', 'user', 'u1')).toEqual([]);
    expect(await store.get('connection', scope, 'c')).toEqual(c);
    const written = await store.write([
      put('connection', scope, 'a', { v: 1 }, 0),
      { op: 'delete', kind: 'connection', scope, id: 'c', expect: 1 },
      put('membership', scope, 'b', { v: 1 }, 0),
    ]);
    expect(written.map((r) => [r.kind, r.id, r.version])).toEqual([
      ['connection', 'a', 1],
      ['membership', 'b', 1],
    ]);
    expect(await store.get('connection', scope, 'c')).toBeNull();
  });

  it('lets exactly one of several instances writing from one version win', async () => {
    const stores = [context.store(), await context.open(), await context.open()];
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 3 }), fc.boolean(), async (writers, fresh) => {
        const scope = scopeId();
        const from = fresh ? 0 : 1;
        if (!fresh) await context.store().write([put('inference', scope, 'x', { by: -1 }, 0)]);
        // Each writer also touches a second resource: a loser must land neither.
        const outcomes = await Promise.allSettled(
          stores
            .slice(0, writers)
            .map((store, by) =>
              store.write([
                put('inference', scope, 'x', { by }, from),
                put('inference', scope, `y${by}`, { by }, 0),
              ]),
            ),
        );
        const winners = outcomes.flatMap((outcome, by) =>
          outcome.status === 'fulfilled' ? [by] : [],
        );
        expect(winners).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') {
            await expectConflict(() => Promise.reject(outcome.reason as Error), 'version_conflict');
          }
        }
        const x = await context.store().get('inference', scope, 'x');
        expect(x).toMatchObject({ version: from + 1, value: { by: winners[0] } });
        const ys = await context.store().list('inference', scope, { after: 'x' });
        expect(ys.map((y) => y.id)).toEqual([`y${String(winners[0])}`]);
      }),
      { numRuns: 10 },
    );
  });

  it('lists one kind in one scope by ascending id, after an id, up to a limit', async () => {
    const store = context.store();
    const scope = scopeId();
    const ids = ['b', 'a', 'c', 'a2', 'B', 'a-1'];
    await store.write(ids.map((id) => put('connection', scope, id, { id }, 0)));
    await store.write([
      put('connection', scopeId(), 'a', {}, 0),
      put('inference', scope, 'a', {}, 0),
    ]);
    const sorted = [...ids].sort();
    const list = async (options?: { after?: string; limit?: number }) =>
      (await store.list('connection', scope, options)).map((r) => r.id);
    expect(await list()).toEqual(sorted);
    expect(await list({ after: 'a2' })).toEqual(sorted.slice(sorted.indexOf('a2') + 1));
    expect(await list({ limit: 2 })).toEqual(sorted.slice(0, 2));
    expect(await list({ after: sorted[1], limit: 2 })).toEqual(sorted.slice(2, 4));
    expect(await list({ after: 'z' })).toEqual([]);
    const [first] = await store.list('connection', scope, { limit: 1 });
    expect(first).toMatchObject({
      kind: 'connection',
      scope,
      id: sorted[0],
      version: 1,
      value: { id: sorted[0] },
    });
  });
}

function describeIndexes(context: ControlStoreContext): void {
  it('finds resources by index, replaces entries on put and drops them on delete', async () => {
    const store = context.store();
    const [t1, t2] = [scopeId(), scopeId()];
    const h = (n: number) => `${t1}-hash-${String(n)}`;
    await store.write([
      put('install', t1, 'i1', { n: 1 }, 0, { key_hash: [h(1)] }),
      put('install', t2, 'i2', { n: 2 }, 0, { key_hash: [h(2)], connection: [h(9)] }),
      put('install', t1, 'i3', { n: 3 }, 0, { connection: [h(9), h(9)] }),
      put('proposal', t1, 'p1', {}, 0, { key_hash: [h(1)] }),
    ]);
    const ids = async (name: string, value: string) =>
      (await store.findByIndex('install', name, value)).map((r) => `${r.scope}/${r.id}`);
    expect(await ids('key_hash', h(1))).toEqual([`${t1}/i1`]);
    expect(await ids('connection', h(9))).toEqual([`${t1}/i3`, `${t2}/i2`].sort());
    expect(await ids('key_hash', h(9))).toEqual([]);
    const [found] = await store.findByIndex('install', 'key_hash', h(2));
    expect(found).toEqual(await store.get('install', t2, 'i2'));

    await store.write([put('install', t1, 'i1', { n: 1 }, 1, { key_hash: [h(3)] })]);
    expect(await ids('key_hash', h(1))).toEqual([]);
    expect(await ids('key_hash', h(3))).toEqual([`${t1}/i1`]);
    await store.write([put('install', t1, 'i1', { n: 1 }, 2)]);
    expect(await ids('key_hash', h(3))).toEqual([`${t1}/i1`]);
    await store.write([put('install', t1, 'i1', { n: 1 }, 3, {})]);
    expect(await ids('key_hash', h(3))).toEqual([]);

    await store.write([{ op: 'delete', kind: 'install', scope: t2, id: 'i2', expect: null }]);
    expect(await ids('key_hash', h(2))).toEqual([]);
    expect(await ids('connection', h(9))).toEqual([`${t1}/i3`]);
    expect((await store.findByIndex('proposal', 'key_hash', h(1))).map((r) => r.id)).toEqual([
      'p1',
    ]);
  });
}
