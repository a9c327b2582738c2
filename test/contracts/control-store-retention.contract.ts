/**
 * Retention in the control store contract: a resource written with
 * `expires` is deleted by `purgeExpired` once that time has come, with its index entries
 * and the snapshot of the actor named like it; a resource without one is kept for good.
 */
import { expect, it } from 'vitest';
import type { ProposalValue } from '../../src/resources/types.ts';
import type { ControlWrite, IndexValues } from '../../src/storage/control-store.ts';
import { put, scopeId, type ControlStoreContext } from './control-store-fixture.ts';

/** A put of a proposal that may be purged from `expires` on (null: never). */
function expiring(
  scope: string,
  id: string,
  value: unknown,
  expect: number | null,
  expires: number | null,
  index?: IndexValues,
): ControlWrite {
  return {
    op: 'put',
    kind: 'proposal',
    scope,
    id,
    // Any JSON document: the suite checks the store, not the proposal's shape.
    value: value as ProposalValue,
    expect,
    expires,
    ...(index === undefined ? {} : { index }),
  };
}

/** The retention tests of the control store contract. */
export function describeRetention(context: ControlStoreContext): void {
  it('purges expired resources with their index entries and actor snapshot, and keeps the rest', async () => {
    const store = context.store();
    const scope = scopeId();
    const now = Date.now();
    const hash = `${scope}-hash`;
    await store.write([
      expiring(scope, 'ended', { n: 1 }, 0, now - 1, { request: [hash] }),
      expiring(scope, 'later', { n: 2 }, 0, now + 60_000),
      put('proposal', scope, 'kept', { n: 3 }, 0),
    ]);
    await store.saveSnapshot('proposal', 'ended', { state: 'lapsed' }, 0);
    await store.saveSnapshot('proposal', 'later', { state: 'pending' }, 0);

    expect(await store.purgeExpired(now, 1000)).toBeGreaterThanOrEqual(1);
    expect(await store.get('proposal', scope, 'ended')).toBeNull();
    expect(await store.findByIndex('proposal', 'request', hash)).toEqual([]);
    expect(await store.loadSnapshot('proposal', 'ended')).toBeNull();
    expect(await store.get('proposal', scope, 'later')).not.toBeNull();
    expect(await store.loadSnapshot('proposal', 'later')).not.toBeNull();

    // A replacement that names no expiry keeps the one it had; `null` clears it.
    await store.write([put('proposal', scope, 'later', { n: 4 }, 1)]);
    await store.write([expiring(scope, 'kept', { n: 5 }, null, null)]);
    expect(await store.purgeExpired(now + 120_000, 1000)).toBeGreaterThanOrEqual(1);
    expect(await store.get('proposal', scope, 'later')).toBeNull();
    expect(await store.loadSnapshot('proposal', 'later')).toBeNull();
    expect(await store.get('proposal', scope, 'kept')).toMatchObject({ value: { n: 5 } });
  });

  it('deletes each expired resource once across purges racing on several instances', async () => {
    const [a, b] = [context.store(), await context.open()];
    const scope = scopeId();
    const now = Date.now() - 5_000;
    await a.write(
      Array.from({ length: 30 }, (_, i) =>
        expiring(scope, `p${String(i).padStart(2, '0')}`, { i }, 0, now),
      ),
    );
    // Limits smaller than the batch: each purge takes a share, none takes a row twice.
    const counts = await Promise.all([
      a.purgeExpired(now, 7),
      b.purgeExpired(now, 7),
      a.purgeExpired(now, 7),
      b.purgeExpired(now, 7),
      a.purgeExpired(now, 7),
    ]);
    let rest = 0;
    for (let n = await a.purgeExpired(now, 100); n > 0; n = await a.purgeExpired(now, 100)) {
      rest += n;
    }
    expect(counts.reduce((sum, n) => sum + n, 0) + rest).toBeGreaterThanOrEqual(30);
    expect(await a.list('proposal', scope)).toEqual([]);
  });
}
