/**
 * The executor helper against the real service (embedded default, the
 * simulated model): it mints its token from its key, follows its face, verifies each
 * gate against the JWKS, claims, runs the handler and completes a turn with two calls;
 * stopped right after its first claim and run again from the cursor it reported, it
 * claims that call again and completes it.
 */
import {
  runExecutor,
  type Client,
  type AllowedCall,
  type LandedRecord,
  type SessionClient,
} from '@agent-session-service/client';
import type { webcrypto } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDocument, startClientHarness, type ClientHarness } from './harness.ts';

const TWO_CALLS = '/call lookup_order {"order_id":"A-1"}\n/call lookup_order {"order_id":"B-2"}';

let h: ClientHarness;
/** An install of an app whose tool `lookup_order` its executor performs. */
let vendor: Client;
beforeAll(async () => {
  h = await startClientHarness();
  const document = appDocument();
  const tool = { ...document.tools[0], name: 'lookup_order', description: 'Looks an order up' };
  const install = await h.flow.install({ vendor: { ...document, tools: [tool] } });
  vendor = h.client.with({ installKey: install.key });
});
afterAll(async () => {
  await h.close();
});

function pem(der: ArrayBuffer): string {
  const base64 = Buffer.from(der).toString('base64');
  return `-----BEGIN PUBLIC KEY-----\n${(base64.match(/.{1,64}/g) ?? []).join('\n')}\n-----END PUBLIC KEY-----\n`;
}

/** A session whose executor `name` holds a fresh Ed25519 key; the principal's side of it. */
async function sessionWithExecutor(name: string) {
  const pair = (await crypto.subtle.generateKey('Ed25519', true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const spki = await crypto.subtle.exportKey('spki', pair.publicKey);
  const grant = await vendor.openSession('ada', {
    executor: { name, public_key: pem(spki) },
  });
  return { grant, key: pair.privateKey, principal: vendor.session(grant) };
}

/** The principal's records through the end of the first turn. */
async function untilTurnEnded(principal: SessionClient): Promise<LandedRecord[]> {
  const records: LandedRecord[] = [];
  for await (const record of principal.tail({ signal: AbortSignal.timeout(20_000) })) {
    records.push(record);
    if (record.envelope.kind.name === 'turn.ended') break;
  }
  return records;
}

const ofKind = (records: readonly LandedRecord[], name: string) =>
  records.filter((r) => r.envelope.kind.name === name);

const lookup = (call: AllowedCall) =>
  Promise.resolve({
    ok: true,
    result: { content: [{ type: 'text', text: `order ${String(call.args.order_id)} shipped` }] },
    error: null,
  });

describe('the executor helper', () => {
  it('completes a turn with two calls and stops when the session is archived', async () => {
    const { grant, key, principal } = await sessionWithExecutor('shipper');
    const events: string[] = [];
    const running = runExecutor(vendor, {
      session: grant.session,
      name: 'shipper',
      key,
      audienceBase: h.harness.deps.baseUrl,
      handle: lookup,
      onEvent: (event) => events.push(event),
    });
    await principal.append([
      { kind: { name: 'message.submitted', version: 1 }, body: { text: TWO_CALLS } },
    ]);
    const records = await untilTurnEnded(principal);
    expect(ofKind(records, 'invoke.completed').map((r) => r.envelope.producer)).toEqual([
      'executor:shipper',
      'executor:shipper',
    ]);
    expect((ofKind(records, 'turn.ended')[0]?.body as { reason: string }).reason).toBe('completed');
    expect((ofKind(records, 'model.output')[1]?.body as { text: string }).text).toBe(
      'lookup_order returned: order A-1 shipped\nlookup_order returned: order B-2 shipped',
    );
    await vendor.archive(grant.session);
    expect(await running).toBe('archived');
    expect(events).toEqual(['claimed', 'completed', 'claimed', 'completed']);
  });

  it('claims again after it stopped right after its first claim, and completes', async () => {
    const { grant, key, principal } = await sessionWithExecutor('shipper');
    let saved = 1;
    const base = {
      session: grant.session,
      name: 'shipper',
      key,
      audienceBase: h.harness.deps.baseUrl,
      handle: lookup,
      onCursor: (next: number) => {
        saved = next;
      },
    };
    const attempts: unknown[] = [];
    const crashed = runExecutor(vendor, {
      ...base,
      onEvent: (event, fields) => {
        if (event === 'claimed') attempts.push(fields.attempt);
      },
      afterClaim: () => {
        throw new Error('crashed after the claim');
      },
    });
    await principal.append([
      { kind: { name: 'message.submitted', version: 1 }, body: { text: TWO_CALLS } },
    ]);
    await expect(crashed).rejects.toThrow('crashed after the claim');
    const restarted = runExecutor(vendor, {
      ...base,
      from: saved,
      onEvent: (event, fields) => {
        if (event === 'claimed') attempts.push(fields.attempt);
      },
    });
    const records = await untilTurnEnded(principal);
    expect(attempts).toEqual(['first', 'again', 'first']);
    const completed = ofKind(records, 'invoke.completed');
    expect(completed.map((r) => r.envelope.producer)).toEqual([
      'executor:shipper',
      'executor:shipper',
    ]);
    expect((ofKind(records, 'turn.ended')[0]?.body as { reason: string }).reason).toBe('completed');
    await vendor.archive(grant.session);
    expect(await restarted).toBe('archived');
  });
});
