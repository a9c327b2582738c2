import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installIndex } from '../../src/consent/documents.ts';
import { deleteInstall, NO_INSTALL_HOOKS, type InstallHooks } from '../../src/consent/installs.ts';
import { NotFound } from '../../src/errors.ts';
import { INDEX, scoped, type InstallValue } from '../../src/resources/types.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import { openSqliteControlStore } from '../../src/storage/sql/open.ts';
import { TenantConfig } from '../../src/schemas/tenant.ts';
import { VendorDocument } from '../../src/schemas/vendor.ts';

let folder: string;
let store: ControlStore;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'installs-'));
  store = await openSqliteControlStore({
    file: path.join(folder, 'service.sqlite'),
    secretsKey: randomBytes(32),
  });
});
afterAll(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
});

/** An install stored as consent leaves it. */
async function install(): Promise<InstallValue> {
  const tenant = `t-${randomUUID().slice(0, 8)}`;
  const value: InstallValue = {
    id: `in_${randomUUID()}`,
    tenant,
    vendor: VendorDocument.parse({ appdoc: 1, name: 'App', description: '', tools: [] }),
    vendorHash: 'a'.repeat(64),
    config: TenantConfig.parse({
      inference: 'fast',
      extra_tools: [{ connection: 'files', tool: 'read' }],
    }),
    deleted: false,
    keyHash: randomBytes(32).toString('hex'),
    request: `rq_${randomUUID()}`,
  };
  await store.write([
    {
      op: 'put',
      kind: 'install',
      scope: tenant,
      id: value.id,
      value,
      expect: 0,
      index: installIndex(value),
    },
  ]);
  return value;
}

describe('deleteInstall (decisions row 76)', () => {
  it('keeps the key on the index for the tombstone and drops the option and connection references', async () => {
    const value = await install();
    await deleteInstall(store, value.tenant, value.id, NO_INSTALL_HOOKS);
    const [byKey] = await store.findByIndex<InstallValue>(
      'install',
      INDEX.key,
      value.keyHash ?? '',
    );
    expect(byKey?.value).toMatchObject({ id: value.id, deleted: true });
    const byOption = await store.findByIndex(
      'install',
      INDEX.inference,
      scoped(value.tenant, 'fast'),
    );
    const byConnection = await store.findByIndex(
      'install',
      INDEX.connection,
      scoped(value.tenant, 'files'),
    );
    expect([byOption, byConnection]).toEqual([[], []]);
  });

  it('runs the hooks again on a repeated delete, so a failed one can be finished', async () => {
    const value = await install();
    const seen: string[] = [];
    let fail = true;
    const hooks: InstallHooks = {
      deleted: (tombstone) => {
        seen.push(`${tombstone.id}:${String(tombstone.value.deleted)}`);
        return fail ? Promise.reject(new Error('archive failed')) : Promise.resolve();
      },
      keyChanged: () => undefined,
    };
    await expect(deleteInstall(store, value.tenant, value.id, hooks)).rejects.toThrow(
      'archive failed',
    );
    fail = false;
    const again = deleteInstall(store, value.tenant, value.id, hooks);
    await expect(again).rejects.toBeInstanceOf(NotFound);
    await expect(again).rejects.toMatchObject({ code: 'install_gone' });
    expect(seen).toEqual([`${value.id}:true`, `${value.id}:true`]);
    await expect(deleteInstall(store, value.tenant, 'in_none', hooks)).rejects.toMatchObject({
      code: 'no_such_install',
    });
  });
});
