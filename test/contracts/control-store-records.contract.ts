/**
 * The secrets, snapshots and usage half of the control store contract (interface 2.14
 * to 2.16; decisions rows 52 to 55). Registered by `describeControlStore`.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { UsageDay, UsageDelta } from '../../src/storage/control-store.ts';
import { scopeId, type ControlStoreContext } from './control-store-fixture.ts';
import { expectConflict } from './log-store-fixture.ts';

const noUsage: UsageDelta = {
  events: 0,
  bytesArchived: 0,
  sessionsCheckpointed: 0,
  tokens: {},
  toolCalls: {},
};

const deltaArb: fc.Arbitrary<UsageDelta> = fc.record({
  events: fc.nat(1000),
  bytesArchived: fc.nat(1_000_000),
  sessionsCheckpointed: fc.nat(5),
  tokens: fc.dictionary(
    fc.constantFrom('simulated', 'openai/gpt-5', 'anthropic/claude', '__proto__'),
    fc.record({ input: fc.nat(10_000), output: fc.nat(10_000) }),
  ),
  toolCalls: fc.dictionary(fc.constantFrom('search', 'github__issues', 'constructor'), fc.nat(20)),
});

/** The usage rows `deltas` add up to, as a plain model. */
function model(deltas: readonly { day: string; delta: UsageDelta }[]): UsageDay[] {
  const days = new Map<string, UsageDay>();
  for (const { day, delta } of deltas) {
    const held = days.get(day) ?? { day, ...noUsage };
    const tokens = new Map(Object.entries(held.tokens));
    for (const [key, t] of Object.entries(delta.tokens)) {
      const before = tokens.get(key) ?? { input: 0, output: 0 };
      tokens.set(key, { input: before.input + t.input, output: before.output + t.output });
    }
    const calls = new Map(Object.entries(held.toolCalls));
    for (const [key, n] of Object.entries(delta.toolCalls))
      calls.set(key, (calls.get(key) ?? 0) + n);
    days.set(day, {
      day,
      events: held.events + delta.events,
      bytesArchived: held.bytesArchived + delta.bytesArchived,
      sessionsCheckpointed: held.sessionsCheckpointed + delta.sessionsCheckpointed,
      tokens: Object.fromEntries(tokens),
      toolCalls: Object.fromEntries(calls),
    });
  }
  return [...days.values()].sort((a, b) => a.day.localeCompare(b.day));
}

/** Registers the secrets, snapshots and usage tests in the current `describe`. */
export function describeControlRecords(context: ControlStoreContext): void {
  it('seals secret values at rest and tells a changed value from an unchanged one', async () => {
    const store = context.store();
    const scope = scopeId();
    const first = `first-${randomBytes(24).toString('hex')}`;
    const second = `second-${randomBytes(24).toString('hex')}`;
    expect(await store.readSecretValue(scope, 'api')).toBeNull();
    expect(await store.putSecretValue(scope, 'api', first)).toEqual({ changed: true });
    const [created] = await store.list('secret', scope);
    expect(created).toMatchObject({
      kind: 'secret',
      scope,
      id: 'api',
      version: 1,
      value: { name: 'api' },
    });
    expect(await store.putSecretValue(scope, 'api', first)).toEqual({ changed: false });
    expect(await store.list('secret', scope)).toEqual([created]);
    expect(await store.readSecretValue(scope, 'api')).toBe(first);
    expect(await store.putSecretValue(scope, 'api', second)).toEqual({ changed: true });
    expect(await (await context.open()).readSecretValue(scope, 'api')).toBe(second);
    expect(await store.list('secret', scope)).toEqual([
      expect.objectContaining({ id: 'api', version: 2, created: created?.created }),
    ]);
    // The same value under another name or scope is a new secret of its own.
    expect(await store.putSecretValue(scope, 'other', second)).toEqual({ changed: true });
    expect(await store.putSecretValue(scopeId(), 'api', second)).toEqual({ changed: true });
    expect(await store.readSecretValue(scope, 'unknown')).toBeNull();
    const raw = await context.atRest();
    expect(raw).toContain('api');
    expect(raw).not.toContain(first);
    expect(raw).not.toContain(second);
    expect(raw).not.toContain(Buffer.from(second).toString('base64'));
  });

  it('deletes a secret value with its secret resource', async () => {
    const store = context.store();
    const scope = scopeId();
    await store.putSecretValue(scope, 'gone', 'value');
    await store.write([{ op: 'delete', kind: 'secret', scope, id: 'gone', expect: 1 }]);
    expect(await store.readSecretValue(scope, 'gone')).toBeNull();
    expect(await store.list('secret', scope)).toEqual([]);
    expect(await store.putSecretValue(scope, 'gone', 'value')).toEqual({ changed: true });
  });

  it('saves snapshots under an optimistic version', async () => {
    const store = context.store();
    const id = scopeId();
    expect(await store.loadSnapshot('session', id)).toBeNull();
    expect(await store.saveSnapshot('session', id, { value: 'idle', context: { n: 1 } }, 0)).toBe(
      1,
    );
    await expectConflict(
      () => store.saveSnapshot('session', id, { value: 'late' }, 0),
      'version_conflict',
    );
    expect(
      await store.saveSnapshot('session', id, { value: 'inferring', context: { n: 2 } }, 1),
    ).toBe(2);
    await expectConflict(
      () => store.saveSnapshot('session', id, { value: 'stale' }, 1),
      'version_conflict',
    );
    await expectConflict(
      () => store.saveSnapshot('session', id, { value: 'ahead' }, 5),
      'version_conflict',
    );
    await expectConflict(
      () => store.saveSnapshot('session', scopeId(), { value: 'x' }, 1),
      'version_conflict',
    );
    expect(await store.loadSnapshot('session', id)).toEqual({
      version: 2,
      snapshot: { value: 'inferring', context: { n: 2 } },
    });
    expect(await store.loadSnapshot('turn', id)).toBeNull();
  });

  it('lets one of two instances saving a snapshot from one version win', async () => {
    const other = await context.open();
    for (let run = 0; run < 5; run++) {
      const id = scopeId();
      await context.store().saveSnapshot('session', id, { n: 0 }, 0);
      const outcomes = await Promise.allSettled([
        context.store().saveSnapshot('session', id, { by: 'one' }, 1),
        other.saveSnapshot('session', id, { by: 'other' }, 1),
      ]);
      const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [i] : []));
      expect(won).toHaveLength(1);
      const stored = await other.loadSnapshot('session', id);
      expect(stored).toEqual({ version: 2, snapshot: { by: won[0] === 0 ? 'one' : 'other' } });
    }
  });

  it('adds usage deltas per tenant and day, merging the maps, from concurrent instances', async () => {
    const stores = [context.store(), await context.open()];
    const dayArb = fc.constantFrom('2026-01-30', '2026-01-31', '2026-02-01', '2026-12-31');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ day: dayArb, delta: deltaArb }), { minLength: 1, maxLength: 10 }),
        async (deltas) => {
          const tenant = scopeId();
          const otherTenant = scopeId();
          await Promise.all([
            ...deltas.map(({ day, delta }, i) => stores[i % 2]?.addUsage(tenant, day, delta)),
            context.store().addUsage(otherTenant, '2026-01-31', { ...noUsage, events: 1 }),
          ]);
          const expected = model(deltas);
          expect(await context.store().readUsage(tenant, '2026-01-01', '2026-12-31')).toEqual(
            expected,
          );
          expect(await stores[1]?.readUsage(tenant, '2026-01-31', '2026-02-01')).toEqual(
            expected.filter((row) => row.day === '2026-01-31' || row.day === '2026-02-01'),
          );
          expect(await context.store().readUsage(tenant, '2025-01-01', '2025-12-31')).toEqual([]);
        },
      ),
      { numRuns: 10 },
    );
  });
}
