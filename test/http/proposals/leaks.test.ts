/**
 * A poll secret, an install key or a consent never leaks into a log
 * line or another tenant's reads; and neither secret is ever stored as it is (2.8 "stored
 * hashed", decisions row 32).
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { TestApp } from '../../support/app.ts';
import { setMembers } from '../../support/console.ts';
import {
  consent,
  flowApp,
  keyHeaders,
  ownerWithOption,
  poll,
  propose,
  vendorDoc,
} from './flow-client.ts';

let harness: TestApp;
let clock: ManualClock;

beforeAll(async () => {
  ({ harness, clock } = await flowApp());
});
afterAll(async () => {
  await harness.close();
});

/** Every byte the stores wrote to the data folder, as text. */
async function storedBytes(): Promise<string> {
  const files = await readdir(harness.dataDir, { recursive: true, withFileTypes: true });
  const contents = await Promise.all(
    files
      .filter((file) => file.isFile())
      .map((file) => readFile(path.join(file.parentPath, file.name))),
  );
  return Buffer.concat(contents).toString('latin1');
}

describe('secrets of the vendor flow', () => {
  it('never reach a log line, the stores in the clear, or another tenant', async () => {
    const owner = await ownerWithOption(harness);
    const marker = `secret-recipient-${randomUUID()}@example.com`;
    const config = {
      inference: 'fast',
      policies: [
        {
          tool: 'send_mail',
          items: [{ arg: 'to', effect: 'deny', op: 'is', operand: { value: marker } }],
        },
      ],
    };
    const proposal = await propose(harness, vendorDoc());
    // Some failures on the way, which log too.
    await poll(harness, proposal);
    await poll(harness, proposal);
    await consent(harness, owner, proposal.request, { ...config, inference: 'nope' });
    expect((await consent(harness, owner, proposal.request, config)).statusCode).toBe(200);
    clock.advance(10_000);
    const receipt = (await poll(harness, proposal)).json<{ install: string; key: string }>();
    const { install, key } = receipt;
    const rotated = await harness.app.inject({
      method: 'POST',
      url: `/installs/${install}/key`,
      headers: owner.headers,
    });
    const fresh = rotated.json<{ key: string }>().key;
    await harness.app.inject({ method: 'GET', url: '/appdoc', headers: keyHeaders(key) });
    await harness.app.inject({ method: 'GET', url: '/appdoc', headers: keyHeaders(fresh) });
    const secrets = [proposal.poll_secret, key, fresh];

    // Logs: not a secret, and not the consent's contents.
    const logs = harness.logs.text();
    expect(logs).toContain('"url":"/consent/token"'); // the log did record these requests
    for (const secret of [...secrets, marker]) expect(logs).not.toContain(secret);

    // Stores: the secrets only as hashes (the consent is the tenant's own data).
    const stored = await storedBytes();
    expect(stored).toContain(proposal.request); // the stores are where we look
    for (const secret of secrets) expect(stored).not.toContain(secret);

    // Another tenant, owner or member, reads none of it.
    const stranger = await ownerWithOption(harness);
    const [member] = await setMembers(harness, stranger, [
      { user: `m-${randomUUID()}`, role: 'member' },
    ]);
    const reads = [
      { method: 'GET', url: '/installs', headers: stranger.headers },
      { method: 'GET', url: `/installs/${install}`, headers: stranger.headers },
      { method: 'GET', url: `/consent/${proposal.request}`, headers: stranger.headers },
      { method: 'GET', url: `/consent/${proposal.request}`, headers: member?.headers ?? {} },
      {
        method: 'PUT',
        url: `/installs/${install}`,
        headers: stranger.headers,
        payload: { inference: 'fast' },
      },
      {
        method: 'POST',
        url: `/consent/${proposal.request}`,
        headers: stranger.headers,
        payload: { inference: 'fast' },
      },
      { method: 'POST', url: `/installs/${install}/key`, headers: stranger.headers },
      { method: 'DELETE', url: `/installs/${install}`, headers: stranger.headers },
    ] as const;
    for (const read of reads) {
      const response = await harness.app.inject(read);
      // Their own install list answers (empty, below); everything else is refused.
      if (read !== reads[0])
        expect(response.statusCode, `${read.method} ${read.url}`).not.toBe(200);
      for (const secret of [...secrets, marker]) expect(response.body).not.toContain(secret);
    }
    expect((await harness.app.inject(reads[0])).json()).toEqual({ items: [], next: null });
    // And the owner's own install is untouched by all of that.
    const mine = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(fresh),
    });
    expect(mine.json()).toMatchObject({
      tenant: { policies: [{ items: [{ operand: { value: marker } }] }] },
    });
  });
});
