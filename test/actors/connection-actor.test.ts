/**
 * Connections as actors of the host (`src/actors/connection.actor.ts`): the machine waits
 * for its probes inside the command, its state is the stored connection, a failed probe
 * writes nothing, racing commands on one version leave one winner, and a host never acts
 * on a connection another process deleted and made anew.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../src/actors/actor-host.ts';
import { ManualClock, systemEntropy } from '../../src/clock.ts';
import { ControlOAuthStore } from '../../src/connections/oauth-store.ts';
import { ConnectionService } from '../../src/connections/service.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import { startEverything, type EverythingServer } from '../mcp/peers/everything.ts';
import { freePort } from '../mcp/peers/loopback.ts';
import { loopbackEgress } from '../support/egress.ts';
import { processes, type Processes } from './proposal-fixture.ts';

let everything: EverythingServer;
beforeAll(async () => {
  everything = await startEverything();
});
afterAll(async () => {
  await everything.close();
});

describe('connections in the actor host', () => {
  let shared: Processes;
  let hosts: ActorHost[];
  const clock = new ManualClock();
  const sealKey = randomBytes(32);

  beforeAll(async () => {
    shared = await processes(clock);
  });
  afterAll(async () => {
    await shared.close();
  });
  beforeEach(() => {
    hosts = [];
  });
  afterEach(async () => {
    await Promise.all(hosts.map((host) => host.close()));
  });

  /**
   * A process: its own store connection (the test app's first, then a second instance's),
   * actor host and connection service.
   */
  function process(): {
    store: ControlStore;
    host: ActorHost;
    service: ConnectionService;
  } {
    const store = shared.stores[hosts.length % 2] ?? shared.stores[0];
    const host = new ActorHost({ store, clock });
    hosts.push(host);
    const service = new ConnectionService({
      host,
      control: store,
      oauth: new ControlOAuthStore(store, sealKey, clock),
      baseUrl: 'http://127.0.0.1',
      clock,
      entropy: systemEntropy,
      egress: loopbackEgress(),
    });
    return { store, host, service };
  }

  const link = (endpoint: string, timeout = '10s') => ({
    name: 'mcp',
    endpoint,
    credential: null,
    result_limit: null,
    timeout,
  });
  const tenant = () => `t-${randomUUID().slice(0, 8)}`;

  it('links with the live catalog, stored as the connection resource, no snapshot kept', async () => {
    const { store, host, service } = process();
    const t = tenant();
    const answer = await service.put(t, 'mcp', link(everything.endpoint));
    expect(answer).toMatchObject({ outcome: 'created', connection: { state: 'linked' } });
    const stored = await store.get('connection', t, 'mcp');
    expect(stored?.version).toBe(1);
    expect(stored?.value.catalog?.tools.length).toBeGreaterThan(0);
    expect(await store.loadSnapshot('connection', `${t}/mcp`)).toBeNull();
    expect(host.stats()).toMatchObject({ commits: 1, conflicts: 0 });
  });

  it('writes nothing for a probe that fails, and answers its upstream error', async () => {
    const { store, service } = process();
    const t = tenant();
    await service.put(t, 'mcp', link(everything.endpoint));
    const unreachable = `http://127.0.0.1:${await freePort()}/mcp`;
    await expect(service.put(t, 'mcp', link(unreachable))).rejects.toMatchObject({ status: 502 });
    const stored = await store.get('connection', t, 'mcp');
    expect(stored).toMatchObject({ version: 1, value: { endpoint: everything.endpoint } });
    // The failure is not kept: the next command starts from the stored connection.
    const again = await service.put(t, 'mcp', link(everything.endpoint));
    expect(again.outcome).toBe('unchanged');
  });

  it('lets one of two racing PUTs win; the other is refused with version_conflict', async () => {
    const [a, b] = [process(), process()];
    const t = tenant();
    const results = await Promise.allSettled([
      a.service.put(t, 'mcp', link(everything.endpoint)),
      b.service.put(t, 'mcp', link(everything.endpoint)),
      a.service.put(t, 'mcp', link(everything.endpoint)),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    for (const r of lost) expect(r.reason).toMatchObject({ code: 'version_conflict' });
    expect((await a.store.get('connection', t, 'mcp'))?.version).toBe(1);
  });

  it('restores from the store on every command: a connection deleted and made anew elsewhere is read afresh', async () => {
    const [a, b] = [process(), process()];
    const t = tenant();
    const ref = { tenant: t, connection: 'mcp' };
    await a.service.put(t, 'mcp', link(everything.endpoint));
    await b.service.remove(ref);
    await b.service.put(t, 'mcp', link(everything.endpoint, '3s'));
    // Version 1 again, of another connection: host a must not act on what it held.
    const stored = await a.service.require(ref);
    expect(stored.version).toBe(1);
    const answer = await a.service.put(t, 'mcp', link(everything.endpoint, '3s'));
    expect(answer).toMatchObject({ outcome: 'unchanged', connection: { timeout: '3s' } });
  });
});
