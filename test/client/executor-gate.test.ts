/**
 * The executor helper performs only calls the service allowed. Its
 * `invoke.allowed` records carry a gate the service signed; an executor that trusts other
 * keys (here the JWKS of a second, real service: its answers reach this executor through
 * a proxy) finds that no gate verifies, so it neither claims the call nor runs the
 * handler, and says `gate_refused`. The same executor trusting this service's keys
 * claims and performs the call.
 */
import {
  createClient,
  runExecutor,
  type AllowedCall,
  type Client,
  type ExecutorOptions,
} from '@agent-session-service/client';
import type { webcrypto } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDocument, message, startClientHarness, type ClientHarness } from './harness.ts';

let h: ClientHarness;
/** Another service, with keys of its own. */
let other: ClientHarness;
let installKey: string;
beforeAll(async () => {
  [h, other] = await Promise.all([startClientHarness(), startClientHarness()]);
  const document = appDocument();
  const tool = { ...document.tools[0], name: 'lookup_order', description: 'Looks an order up' };
  installKey = (await h.flow.install({ vendor: { ...document, tools: [tool] } })).key;
});
afterAll(async () => {
  await Promise.all([h.close(), other.close()]);
});

function pem(der: ArrayBuffer): string {
  const base64 = Buffer.from(der).toString('base64');
  return `-----BEGIN PUBLIC KEY-----\n${(base64.match(/.{1,64}/g) ?? []).join('\n')}\n-----END PUBLIC KEY-----\n`;
}

/**
 * A client of this service that fetches the keys it verifies gates with from `keysFrom`,
 * and records the path of every request it sends.
 */
function executorClient(keysFrom: string, sent: string[]): Client {
  return createClient({
    baseUrl: h.base,
    installKey,
    fetch: (request) => {
      const url = new URL(request.url);
      sent.push(`${request.method} ${url.pathname}`);
      if (url.pathname !== '/.well-known/jwks.json') return fetch(request);
      return fetch(new URL(url.pathname, keysFrom));
    },
  });
}

/** A session with executor `shipper` and one allowed call; runs the executor on it. */
async function runOnOneCall(client: Client) {
  const pair = (await crypto.subtle.generateKey('Ed25519', true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const spki = await crypto.subtle.exportKey('spki', pair.publicKey);
  const vendor = h.client.with({ installKey });
  const grant = await vendor.openSession('ada', {
    executor: { name: 'shipper', public_key: pem(spki) },
  });
  const handled: AllowedCall[] = [];
  const events: string[] = [];
  const { promise: decided, resolve } = Promise.withResolvers<string>();
  const options: ExecutorOptions = {
    session: grant.session,
    name: 'shipper',
    key: pair.privateKey,
    audienceBase: h.harness.deps.baseUrl,
    handle: (call) => {
      handled.push(call);
      return Promise.resolve({ ok: true, result: { content: [] }, error: null });
    },
    onEvent: (event) => {
      events.push(event);
      if (event === 'gate_refused' || event === 'completed') resolve(event);
    },
  };
  const running = runExecutor(client, options);
  await vendor.session(grant).append([message('/call lookup_order {"order_id":"A-1"}')]);
  const outcome = await decided;
  await vendor.archive(grant.session);
  // The executor stops where the session ends.
  return { outcome, handled, events, end: await running };
}

describe('the executor helper and the gate', () => {
  it('refuses a call whose gate does not verify: no claim, no handler', async () => {
    const sent: string[] = [];
    const run = await runOnOneCall(executorClient(other.base, sent));
    expect(run.outcome).toBe('gate_refused');
    expect(run.events).toEqual(['gate_refused']);
    expect(run.end).toBe('archived');
    expect(run.handled).toEqual([]);
    // It read the other service's keys, and asked this one for no claim.
    expect(sent).toContain('GET /.well-known/jwks.json');
    expect(sent.filter((line) => line.endsWith('/executor/claim'))).toEqual([]);
  });

  it('performs the same call when the gate verifies against this service', async () => {
    const sent: string[] = [];
    const run = await runOnOneCall(executorClient(h.base, sent));
    expect(run.outcome).toBe('completed');
    expect(run.events).toEqual(['claimed', 'completed']);
    expect(run.handled.map((call) => call.args)).toEqual([{ order_id: 'A-1' }]);
    expect(sent.filter((line) => line.endsWith('/executor/claim'))).toHaveLength(1);
  });
});
