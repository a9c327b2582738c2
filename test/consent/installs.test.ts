/**
 * `deleteInstall` over the control store of a running service, on installs made the way
 * users make them: an owner links `files`, creates the option `fast` and consents to a
 * vendor's proposal with an extra tool of `files`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteInstall, type InstallHooks } from '../../src/consent/installs.ts';
import { NotFound } from '../../src/errors.ts';
import { INDEX, scoped, type InstallValue } from '../../src/resources/types.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { flowOf } from '../support/flow.ts';
import { sampleTools, startPagingServer, type PagingServer } from '../mcp/peers/paging.ts';

let harness: TestApp;
let store: ControlStore;
let files: PagingServer;

beforeAll(async () => {
  harness = await startTestApp();
  store = harness.stores.control;
  files = await startPagingServer(sampleTools(2), 10);
});
afterAll(async () => {
  await files.close();
  await harness.close();
});

/** An install made by consent, selecting option `fast` and a tool of connection `files`. */
async function install(): Promise<InstallValue> {
  const flow = flowOf(harness);
  const owner = await flow.owner();
  await flow.option(owner, 'fast');
  await flow.link(owner, 'files', files.endpoint);
  const made = await flow.install({
    owner,
    config: { inference: 'fast', extra_tools: [{ connection: 'files', tool: 'tool-00' }] },
  });
  const stored = await store.get('install', made.tenant, made.id);
  if (stored === null) throw new Error(`install ${made.id} is not stored`);
  return stored.value;
}

describe('deleteInstall (decisions row 76)', () => {
  it('keeps the key on the index for the tombstone and drops the option and connection references', async () => {
    const value = await install();
    await deleteInstall(store, value.tenant, value.id, harness.services.installHooks);
    const [byKey] = await store.findByIndex('install', INDEX.key, value.keyHash ?? '');
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
