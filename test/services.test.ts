/**
 * The composition root (`src/services.ts`): one app holds one actor host, one session
 * directory and one OAuth state store, and every route reaches them. Sessions and
 * proposals opened over HTTP (and connections linked over HTTP) run as actors of
 * `services.host`; the app's close closes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proposalActor } from '../src/actors/proposal.actor.ts';
import { startEverything, type EverythingServer } from './mcp/peers/everything.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { newOwner } from './support/console.ts';
import { listeningClient } from './turns/turn-client.ts';

let harness: TestApp;
let everything: EverythingServer;
beforeAll(async () => {
  [harness, everything] = await Promise.all([startTestApp(), startEverything()]);
});
afterAll(async () => {
  await Promise.all([harness.close(), everything.close()]);
});

/** Runs `act` and answers by how much the host's activations grew meanwhile. */
async function activationsDuring(act: () => Promise<void>): Promise<number> {
  const before = harness.services.host.stats().activations;
  await act();
  return harness.services.host.stats().activations - before;
}

describe('the services of one app', () => {
  it('run a session opened over HTTP in services.host and file it in services.directory', async () => {
    // The install comes through the public flow: proposal, consent, the vendor's poll.
    const client = await listeningClient(harness);
    const { key, install } = await client.install();
    let session = '';
    const grew = await activationsDuring(async () => {
      const response = await harness.app.inject({
        method: 'POST',
        url: '/sessions?principal=ada',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.statusCode, response.body).toBe(201);
      session = response.json<{ session: string }>().session;
    });
    expect(grew).toBe(1);
    expect((await harness.services.directory.get(session))?.value.install).toBe(install);
  });

  it('run a proposal made over HTTP in the same host', async () => {
    const before = harness.services.host.stats().commits;
    const grew = await activationsDuring(async () => {
      const response = await harness.app.inject({
        method: 'POST',
        url: '/appdoc',
        payload: {
          appdoc: 1,
          name: 'Services test',
          description: 'A proposal that lands in the one actor host.',
          tools: [],
        },
      });
      expect(response.statusCode, response.body).toBe(201);
    });
    expect(grew).toBe(1);
    expect(harness.services.host.stats().commits).toBeGreaterThan(before);
  });

  it('run a connection linked over HTTP in the same host, its state the stored connection', async () => {
    const owner = await newOwner(harness);
    const put = () =>
      harness.app.inject({
        method: 'PUT',
        url: '/connections/everything',
        headers: owner.headers,
        payload: { name: 'everything', endpoint: everything.endpoint },
      });
    const grew = await activationsDuring(async () => {
      const response = await put();
      expect(response.statusCode, response.body).toBe(201);
    });
    expect(grew).toBe(1);
    const stored = await harness.stores.control.get('connection', owner.tenant, 'everything');
    expect(stored).toMatchObject({ version: 1, value: { state: 'linked' } });
    // Row 46: the same PUT again is one more command to the host that writes nothing.
    const again = await put();
    expect(again.json()).toMatchObject({ outcome: 'unchanged' });
    expect(
      (await harness.stores.control.get('connection', owner.tenant, 'everything'))?.version,
    ).toBe(1);
  });
});

describe('closing the app', () => {
  it('closes its services: the host refuses further commands', async () => {
    const own = await startTestApp();
    await own.close();
    const actor = proposalActor({
      createInstall: () => Promise.resolve(),
      updateInstall: () => Promise.resolve(),
    });
    await expect(
      own.services.host.send(actor, 'rq_closed', { type: 'poll.requested', secret: 'x' }),
    ).rejects.toMatchObject({ code: 'host_closed' });
  });
});
