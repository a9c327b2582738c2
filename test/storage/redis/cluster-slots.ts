/**
 * Slots of the test cluster for the suites: which master owns one, and moving one to
 * another master while the suites run, step by step as `redis-cli --cluster reshard`
 * does (the cluster specification's "live resharding").
 */
import type { Cluster, Redis } from 'ioredis';

/** The master that owns `slot`, as `admin`'s slot map has it. */
export function owner(admin: Cluster, slot: number): Redis {
  const node = admin.slots[slot]?.[0];
  const found = admin.nodes('master').find((master) => address(master) === node);
  if (found === undefined) throw new Error(`no master owns slot ${String(slot)}`);
  return found;
}

/**
 * Moves `slot` from its master to another one: marks it importing and migrating, moves
 * its keys with MIGRATE, runs `meanwhile` while the keys sit on the new master but the
 * old one still owns the slot, then hands the slot over on every master. The hand-over
 * runs even when `meanwhile` fails, so no run leaves the cluster with an open slot.
 */
export async function moveSlot(
  admin: Cluster,
  slot: number,
  meanwhile: () => Promise<void>,
): Promise<{ readonly source: Redis; readonly target: Redis }> {
  await refresh(admin);
  const masters = admin.nodes('master');
  const source = owner(admin, slot);
  const target = masters.find((master) => master !== source);
  if (target === undefined) throw new Error('the cluster has one master only');
  const [sourceId, targetId] = await Promise.all([nodeId(source), nodeId(target)]);
  await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId);
  await source.cluster('SETSLOT', slot, 'MIGRATING', targetId);
  try {
    for (;;) {
      const keys = await source.cluster('GETKEYSINSLOT', slot, 100);
      if (keys.length === 0) break;
      const { host, port } = target.options;
      await source.migrate(host ?? '127.0.0.1', port ?? 6379, '', 0, 5000, 'KEYS', ...keys);
    }
    await meanwhile();
  } finally {
    // The new owner first, as redis-cli does, then the old one, which then drops the
    // slot's shard channels, then the rest.
    const rest = masters.filter((master) => master !== source && master !== target);
    for (const master of [target, source, ...rest]) {
      await master.cluster('SETSLOT', slot, 'NODE', targetId);
    }
    await refresh(admin);
  }
  return { source, target };
}

function address(node: Redis): string {
  return `${node.options.host ?? ''}:${String(node.options.port ?? '')}`;
}

function nodeId(node: Redis): Promise<string> {
  return node.cluster('MYID');
}

function refresh(admin: Cluster): Promise<void> {
  return new Promise((resolve, reject) => {
    admin.refreshSlotsCache((error) => {
      if (error === null || error === undefined) resolve();
      else reject(error);
    });
  });
}
