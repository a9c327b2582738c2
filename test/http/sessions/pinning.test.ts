/**
 * Consent over time (3.5): a session keeps the composed document it pinned at open; a
 * later change of the install's consent reaches only sessions opened afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComposedDocument } from '../../../src/schemas/vendor.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { flowOf, vendorDocument } from '../../support/flow.ts';
import { SessionClient } from './session-client.ts';

let harness: TestApp;
let client: SessionClient;

beforeAll(async () => {
  harness = await startTestApp();
  client = await SessionClient.listen(harness);
});
afterAll(async () => {
  await harness.close();
});

/** The `config` of a session's session.opened and the document stored under it. */
async function pinned(session: string): Promise<{ hash: string; document: ComposedDocument }> {
  const [opened] = await harness.stores.log.read(session, { from: 1, limit: 1 });
  const hash = (JSON.parse(opened?.body ?? '{}') as { config: string }).config;
  const record = await harness.stores.control.get('session', '', session);
  expect(record?.value.config).toBe(hash);
  const document = await harness.stores.control.get(
    'session_config',
    record?.value.tenant ?? '',
    hash,
  );
  if (document === null) throw new Error(`no pinned document ${hash}`);
  return { hash, document: document.value };
}

describe('the composed document a session pins (3.5)', () => {
  it('stays with the session when the consent changes; new sessions take the new one', async () => {
    const install = await flowOf(harness).install();
    const before = await client.open(install);
    const first = await pinned(before.session);
    expect(first.document).toMatchObject({
      install: { id: install.id, tenant: install.tenant },
      tenant: { inference: 'default' },
      vendor: { name: 'Test app' },
    });
    // Two sessions under one consent pin one document.
    expect((await pinned((await client.open(install)).session)).hash).toBe(first.hash);

    // The vendor proposes a new document for the install; the owner consents to it with
    // another inference option (decisions row 94).
    await flowOf(harness).option(install.owner, 'bigger');
    await flowOf(harness).reconsent(install, vendorDocument('Test app, updated'), {
      inference: 'bigger',
    });

    const after = await client.open(install);
    const second = await pinned(after.session);
    expect(second.hash).not.toBe(first.hash);
    expect(second.document).toMatchObject({
      tenant: { inference: 'bigger' },
      vendor: { name: 'Test app, updated' },
    });
    const again = await pinned(before.session);
    expect(again).toEqual(first);
  });
});
