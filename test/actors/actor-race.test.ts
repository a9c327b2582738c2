/**
 * Two actor hosts, each with its own connection to one SQLite file, stand for two
 * processes serving the same actors. The store's version check must keep them from ever
 * both committing from the same state.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../src/actors/actor-host.ts';
import { PROPOSAL_ACTOR, proposalActor } from '../../src/actors/proposal.actor.ts';
import { ManualClock } from '../../src/clock.ts';
import { Conflict } from '../../src/errors.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import {
  consent,
  countedEffects as installEffects,
  processes,
  propose,
  type Processes,
} from './proposal-fixture.ts';

/**
 * The pair of stores, but each one's first snapshot load answers only once the other's
 * has been read too: two hosts then start from one version, so their first commits
 * collide whatever the machine's load does to the timing of everything else.
 */
function meetingAtFirstLoad(
  pair: readonly [ControlStore, ControlStore],
): readonly [ControlStore, ControlStore] {
  let arrived = 0;
  let release = (): void => undefined;
  const met = new Promise<void>((resolve) => {
    release = resolve;
  });
  const meeting = (store: ControlStore): ControlStore => {
    let first = true;
    const load: ControlStore['loadSnapshot'] = async (type, id) => {
      const loaded = await store.loadSnapshot(type, id);
      if (first) {
        first = false;
        arrived += 1;
        if (arrived === pair.length) release();
        await met;
      }
      return loaded;
    };
    return new Proxy(store, {
      get(target, property) {
        if (property === 'loadSnapshot') return load;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
  };
  return [meeting(pair[0]), meeting(pair[1])];
}

describe('ActorHost in two processes', () => {
  let shared: Processes;
  let stores: readonly [ControlStore, ControlStore];
  let hosts: ActorHost[];
  const clock = new ManualClock();
  /** A proposal the vendor made; the service's own host committed its first snapshot. */
  const newProposal = () => propose(shared.harness);

  beforeAll(async () => {
    shared = await processes(clock);
    stores = shared.stores;
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

  function host(store: ControlStore, attempts: number): ActorHost {
    const made = new ActorHost({ store, clock, attempts });
    hosts.push(made);
    return made;
  }

  it('never commits two commands from one version: every answered command is one version', async () => {
    const [first, second] = meetingAtFirstLoad(stores);
    const [a, b] = [host(first, 3), host(second, 3)];
    const type = proposalActor(installEffects(stores[0]));
    const p = await newProposal();

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
    // The first version is the service's own submission; every answered poll is one more.
    expect(a.stats().commits + b.stats().commits).toBe(answered);
  });

  it('grants a proposal once when two processes take consents for it at the same time', async () => {
    const [a, b] = [host(stores[0], 20), host(stores[1], 20)];
    const calls: string[] = [];
    const types = [
      proposalActor(installEffects(stores[0], calls)),
      proposalActor(installEffects(stores[1], calls)),
    ] as const;
    const p = await newProposal();
    const tenant = `tenant-${randomUUID()}`;

    const settled = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0
          ? a.send(types[0], p.request, consent(p.request, tenant))
          : b.send(types[1], p.request, consent(p.request, tenant)),
      ),
    );
    // The real effects write the install under the proposal's version: a consent whose
    // effect lost that race is refused with a Conflict and commits nothing (409 at the
    // route); every other one is answered, one of them granted.
    const answers = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    for (const r of settled) {
      if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(Conflict);
    }
    const outcomes = answers.map((answer) => answer.outcome).sort();
    expect(outcomes.filter((o) => o === 'granted')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'already_granted')).toHaveLength(answers.length - 1);
    const installs = new Set(answers.map((answer) => ('install' in answer ? answer.install : '')));
    expect(installs.size).toBe(1);
    // The effect ran at least once (again only when its commit lost a race); one install exists.
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(await stores[1].list('install', tenant)).toHaveLength(1);
    expect((await stores[1].loadSnapshot(PROPOSAL_ACTOR, p.request))?.version).toBe(
      1 + answers.length,
    );
  });

  it('reports a Conflict once another process moved the actor on under every attempt', async () => {
    const attempts = 4;
    const a = host(stores[0], attempts);
    const b = host(stores[1], attempts);
    const p = await newProposal();
    let moved = 0;
    // The effect stands for another process committing the actor while this one works:
    // a poll through the other host moves it on.
    const type = proposalActor({
      ...installEffects(stores[0]),
      createInstall: async () => {
        clock.advance(5000);
        await b.send(proposalActor(installEffects(stores[1])), p.request, p.poll);
        moved += 1;
      },
    });

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
