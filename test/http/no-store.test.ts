/**
 * Every answer that carries a credential (a console, session or executor
 * token, a grant, an install key, a poll secret) says `Cache-Control: no-store`, so no
 * cache between the service and its caller keeps one. Reached over HTTP as users do.
 */
import { randomUUID } from 'node:crypto';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { kinds, listeningClient, vendorDocument, type TurnClient } from '../turns/turn-client.ts';

let harness: TestApp;
let client: TurnClient;

beforeAll(async () => {
  harness = await startTestApp();
  client = await listeningClient(harness);
});
afterAll(async () => {
  await harness.close();
});

/** Sends a request; answers its status, its `Cache-Control` and its parsed body. */
async function send(method: string, path: string, bearer: string | null, body?: unknown) {
  const response = await fetch(`${client.base}${path}`, {
    method,
    headers: {
      ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    cache: response.headers.get('cache-control'),
    pragma: response.headers.get('pragma'),
    body: (text === '' ? undefined : JSON.parse(text)) as Record<string, unknown>,
  };
}

describe('answers that carry a credential', () => {
  it('say Cache-Control: no-store, from the proposal to the grant', async () => {
    const seen: [string, number, string | null, string | null][] = [];
    const note = (name: string, answer: Awaited<ReturnType<typeof send>>) => {
      seen.push([name, answer.status, answer.cache, answer.pragma]);
      return answer;
    };
    const owner = await client.owner();
    await send('PUT', '/inferences/fast', owner.token, { provider: 'simulated' });
    const proposal = note('POST /appdoc', await send('POST', '/appdoc', null, vendorDocument()));
    const request = String(proposal.body.request);
    await send('POST', `/consent/${request}`, owner.token, { inference: 'fast' });
    const receipt = note(
      'POST /consent/token',
      await send('POST', '/consent/token', String(proposal.body.poll_secret), { request }),
    );
    const install = String(receipt.body.install);
    const key = note(
      'POST /installs/{id}/key',
      await send('POST', `/installs/${install}/key`, owner.token),
    ).body.key as string;
    note(
      'POST /installs/{id}/proposals',
      await send('POST', `/installs/${install}/proposals`, key, vendorDocument()),
    );
    note(
      'POST /console/token',
      await send('POST', '/console/token', harness.keys.generatedOperatorToken ?? '', {
        user: owner.user,
        tenant: owner.tenant,
      }),
    );

    const executor = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const opened = note(
      'POST /sessions',
      await send('POST', '/sessions?principal=ada', key, {
        executor: { name: 'shipper', public_key: await exportSPKI(executor.publicKey) },
      }),
    ).body as { session: string; token: string };
    note(
      'GET /sessions/{id}/token',
      await send('GET', `/sessions/${opened.session}/token?principal=ada`, key),
    );
    note(
      'POST /console/sessions/{id}/token',
      await send('POST', `/console/sessions/${opened.session}/token`, owner.token),
    );
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('shipper')
      .setAudience(`${harness.deps.baseUrl}/sessions/${opened.session}/executor/token`)
      .setExpirationTime('2m')
      .setJti(randomUUID())
      .sign(executor.privateKey);
    const executorToken = note(
      'GET /sessions/{id}/executor/token',
      await send('GET', `/sessions/${opened.session}/executor/token`, assertion),
    ).body.token as string;
    await client.send(opened, '/call lookup_order {"order_id":"A-1"}');
    const face = { session: opened.session, token: executorToken };
    const log = await client.until(face, (records) => kinds(records).includes('invoke.allowed'));
    const cause = log.find((r) => r.envelope.kind.name === 'invoke.allowed')?.envelope.cursor;
    note(
      'POST /sessions/{id}/executor/claim',
      await send('POST', `/sessions/${opened.session}/executor/claim`, executorToken, { cause }),
    );

    expect(seen.map(([name, status]) => [name, status])).toEqual([
      ['POST /appdoc', 201],
      ['POST /consent/token', 200],
      ['POST /installs/{id}/key', 200],
      ['POST /installs/{id}/proposals', 201],
      ['POST /console/token', 200],
      ['POST /sessions', 201],
      ['GET /sessions/{id}/token', 200],
      ['POST /console/sessions/{id}/token', 200],
      ['GET /sessions/{id}/executor/token', 200],
      ['POST /sessions/{id}/executor/claim', 200],
    ]);
    for (const [name, , cache, pragma] of seen) {
      expect([name, cache, pragma]).toEqual([name, 'no-store', 'no-cache']);
    }
  });

  it('say no-store on a refusal too, and other answers say nothing of it', async () => {
    const refused = await send('POST', '/console/token', 'op_wrong', { user: 'u', tenant: 't-x' });
    expect(refused.status).toBe(401);
    expect(refused.cache).toBe('no-store');
    const health = await send('GET', '/health', null);
    expect(health.cache).toBeNull();
  });
});
