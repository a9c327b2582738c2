/**
 * Two actor hosts, each with its own connection to one SQLite file, stand for two
 * processes serving the same actors. The store's version check must keep them from ever
 * both committing from the same state.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../src/actors/actor-host.ts';
import { PROPOSAL_ACTOR, proposalActor } from '../../src/actors/proposal.actor.ts';
import { ManualClock } from '../../src/clock.ts';
import { Conflict } from '../../src/errors.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import {
  consent,
  installEffects,
  newProposal,
  storeFolder,
  type StoreFolder,
} from './proposal-fixture.ts';

describe('ActorHost in two processes', () => {
  let folder: StoreFolder;
  let stores: [ControlStore, ControlStore];
  let hosts: ActorHost[];
  const clock = new ManualClock();

  beforeEach(async () => {
    folder = await storeFolder();
    stores = [await folder.open(), await folder.open()];
    hosts = [];
  });

  afterEach(async () => {
    await Promise.all(hosts.map((host) => host.close()));
    await folder.cleanup();
  });

  function host(store: ControlStore, attempts: number): ActorHost {
    const made = new ActorHost({ store, clock, attempts });
    hosts.push(made);
    return made;
  }

  it('never commits two commands from one version: every answered command is one version', async () => {
    const [a, b] = [host(stores[0], 3), host(stores[1], 3)];
    const type = proposalActor(installEffects(stores[0]));
    const p = newProposal();
    await a.send(type, p.request, p.submit);

    // Polls change the state (lastPoll, interval), so each one must commit a version.
    const sends = Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? a : b).send(type, p.request, p.poll),
    );
    const results = await Promise.allSettled(sends);
    const answered = results.filter((r) => r.status === 'fulfilled').length;
    for (const r of results) {
      if (r.status === 'rejected') {
        // Out of attempts: reported as a Conflict, nothing committed for it.
        expect(r.reason).toBeInstanceOf(Conflict);
        expect(r.reason).toMatchObject({ code: 'version_conflict' });
      }
    }
    const stored = await stores[0].loadSnapshot(PROPOSAL_ACTOR, p.request);
    expect(stored?.version).toBe(1 + answered);
    // At one instant every poll after the first is too fast and adds 5000 ms: answered
    // one after another, they name every interval once, and the last one is stored.
    const intervals = results.flatMap((r) =>
      r.status === 'fulfilled' && r.value.outcome === 'slow_down' ? [r.value.interval] : [],
    );
    const expected = Array.from({ length: answered - 1 }, (_, i) => 10_000 + 5000 * i);
    expect(intervals.sort((x, y) => x - y)).toEqual(expected);
    expect(stored?.snapshot).toMatchObject({ context: { interval: 5000 * answered } });
    // The race was real: the hosts did collide, and lost commits were retried.
    const conflicts = a.stats().conflicts + b.stats().conflicts;
    expect(conflicts).toBeGreaterThan(0);
    expect(a.stats().commits + b.stats().commits).toBe(1 + answered);
  });

  it('grants a proposal once when two processes take consents for it at the same time', async () => {
    const [a, b] = [host(stores[0], 20), host(stores[1], 20)];
    const calls: string[] = [];
    const types = [
      proposalActor(installEffects(stores[0], calls)),
      proposalActor(installEffects(stores[1], calls)),
    ] as const;
    const p = newProposal();
    const tenant = `tenant-${randomUUID()}`;
    await a.send(types[0], p.request, p.submit);

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0
          ? a.send(types[0], p.request, consent(p.request, tenant))
          : b.send(types[1], p.request, consent(p.request, tenant)),
      ),
    );
    const outcomes = answers.map((answer) => answer.outcome).sort();
    expect(outcomes.filter((o) => o === 'granted')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'already_granted')).toHaveLength(9);
    const installs = new Set(answers.map((answer) => ('install' in answer ? answer.install : '')));
    expect(installs.size).toBe(1);
    // The effect ran at least once (again only when its commit lost a race); one install exists.
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(await stores[1].list('install', tenant)).toHaveLength(1);
    expect((await stores[1].loadSnapshot(PROPOSAL_ACTOR, p.request))?.version).toBe(11);
  });

  it('reports a Conflict once another process moved the actor on under every attempt', async () => {
    const attempts = 4;
    const a = host(stores[0], attempts);
    const p = newProposal();
    let moved = 0;
    // The effect stands for another process committing the actor while this one works.
    const type = proposalActor({
      ...installEffects(stores[0]),
      createInstall: async () => {
        const current = await stores[1].loadSnapshot(PROPOSAL_ACTOR, p.request);
        await stores[1].saveSnapshot(
          PROPOSAL_ACTOR,
          p.request,
          current?.snapshot,
          current?.version ?? 0,
        );
        moved += 1;
      },
    });
    await a.send(type, p.request, p.submit);

    const error = await a
      .send(type, p.request, consent(p.request, 'tenant'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Conflict);
    expect(error).toMatchObject({ code: 'version_conflict' });
    expect(moved).toBe(attempts);
    expect(a.stats().conflicts).toBe(attempts);
    // Nothing this command did was committed: the proposal is still pending.
    const stored = await stores[0].loadSnapshot(PROPOSAL_ACTOR, p.request);
    expect(stored).toMatchObject({ version: 1 + attempts, snapshot: { value: 'pending' } });
  });
});
