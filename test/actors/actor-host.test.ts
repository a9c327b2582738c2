import { randomUUID } from 'node:crypto';
import { createMachine } from 'xstate';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../src/actors/actor-host.ts';
import { PROPOSAL_ACTOR, proposalActor } from '../../src/actors/proposal.actor.ts';
import { ManualClock } from '../../src/clock.ts';
import { Conflict, Unavailable } from '../../src/errors.ts';
import { PROPOSAL_LIFETIME_MS } from '../../src/machines/proposal.machine.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import {
  consent,
  countedEffects as installEffects,
  processes,
  propose,
  submission,
  type Processes,
} from './proposal-fixture.ts';

/** A promise and the function that fulfils it. */
function gate() {
  const { promise, resolve } = Promise.withResolvers<undefined>();
  return {
    opened: promise,
    open: () => {
      resolve(undefined);
    },
  };
}

describe('ActorHost', () => {
  let shared: Processes;
  let store: ControlStore;
  const clock = new ManualClock();
  let host: ActorHost;
  const tenant = () => `tenant-${randomUUID()}`;
  /** A proposal the vendor made; the app's host committed its first snapshot. */
  const newProposal = () => propose(shared.harness);

  beforeAll(async () => {
    shared = await processes(clock);
    store = shared.stores[0];
  });
  afterAll(async () => {
    await shared.close();
  });
  beforeEach(() => {
    host = new ActorHost({ store, clock });
  });
  afterEach(async () => {
    await host.close();
  });

  it('answers each command from the machine and commits every transition with its version', async () => {
    const type = proposalActor(installEffects(store));
    const p = await newProposal();
    const t = tenant();

    // Submitted by the service's own host (version 1); this one restores it.
    expect(p.expires).toBe(clock.now() + PROPOSAL_LIFETIME_MS);
    expect(await host.send(type, p.request, p.poll)).toEqual({ outcome: 'authorization_pending' });
    const granted = await host.send(type, p.request, consent(p.request, t));
    expect(granted).toMatchObject({ outcome: 'granted' });

    const stored = await store.loadSnapshot(PROPOSAL_ACTOR, p.request);
    expect(stored?.version).toBe(3);
    expect(stored?.snapshot).toMatchObject({ value: 'granted' });
    // The real effect ran: the install exists in the store.
    const install = granted.outcome === 'granted' ? granted.install : '';
    expect(await store.get('install', t, install)).toMatchObject({ value: { request: p.request } });
  });

  it('takes time from the injected clock: a proposal lapses after ten minutes', async () => {
    const type = proposalActor(installEffects(store));
    const p = await newProposal();
    clock.advance(PROPOSAL_LIFETIME_MS - 1);
    expect(await host.send(type, p.request, p.poll)).toEqual({ outcome: 'authorization_pending' });
    clock.advance(1);
    expect(await host.send(type, p.request, consent(p.request, tenant()))).toEqual({
      outcome: 'not_found',
    });
    expect(await host.send(type, p.request, p.poll)).toEqual({ outcome: 'expired_token' });
    expect((await store.loadSnapshot(PROPOSAL_ACTOR, p.request))?.snapshot).toMatchObject({
      value: 'lapsed',
    });
  });

  it('delivers one command at a time per actor, and actors in parallel', async () => {
    const open = gate();
    const effects = installEffects(store);
    let inFlight = 0;
    const type = proposalActor({
      ...effects,
      createInstall: async (params) => {
        inFlight += 1;
        await open.opened;
        await effects.createInstall(params);
        inFlight -= 1;
      },
    });
    const a = await newProposal();
    const b = await newProposal();

    const consenting = host.send(type, a.request, consent(a.request, tenant()));
    let polledA = false;
    const pollA = host.send(type, a.request, a.poll).finally(() => {
      polledA = true;
    });
    // Another actor is not held up by a's effect.
    expect(await host.send(type, b.request, b.poll)).toEqual({ outcome: 'authorization_pending' });
    expect(inFlight).toBe(1);
    expect(polledA).toBe(false);

    open.open();
    expect(await consenting).toMatchObject({ outcome: 'granted' });
    // The poll ran after the consent committed, so it answers the receipt.
    expect(await pollA).toMatchObject({ outcome: 'receipt' });
    expect(inFlight).toBe(0);
  });

  it('passivates idle actors and reactivates them from their snapshot', async () => {
    await host.close();
    host = new ActorHost({ store, clock, idleMs: 1000 });
    const type = proposalActor(installEffects(store));
    const p = await newProposal();
    await host.send(type, p.request, p.poll);
    expect(host.isActive(type, p.request)).toBe(true);

    clock.advance(999);
    expect(host.sweep()).toBe(0);
    clock.advance(1);
    expect(host.sweep()).toBe(1);
    expect(host.isActive(type, p.request)).toBe(false);

    // 1000 ms after the last poll, under the 5000 ms interval: only a restored `lastPoll` says so.
    expect(await host.send(type, p.request, p.poll)).toEqual({
      outcome: 'slow_down',
      interval: 10_000,
    });
    expect(host.isActive(type, p.request)).toBe(true);
    expect(host.stats()).toMatchObject({ activations: 2, passivations: 1, commits: 2 });
  });

  it('passivates an actor of a type kept 0 ms as soon as it answered', async () => {
    await host.close();
    host = new ActorHost({ store, clock, idleMs: 60_000 });
    const type = { ...proposalActor(installEffects(store)), keepMs: 0 };
    const p = await newProposal();
    expect(await host.send(type, p.request, p.poll)).toMatchObject({
      outcome: 'authorization_pending',
    });
    expect(host.isActive(type, p.request)).toBe(false);
    // Restored from its committed snapshot: the poll is answered as by the kept actor.
    clock.advance(5000);
    expect(await host.send(type, p.request, p.poll)).toMatchObject({
      outcome: 'authorization_pending',
    });
    expect(host.isActive(type, p.request)).toBe(false);
    expect(host.stats()).toMatchObject({ activations: 2, passivations: 2, commits: 2 });
  });

  it('surfaces a failing effect as a typed error and commits nothing', async () => {
    const effects = installEffects(store);
    const t = tenant();
    let failWith: Error | null = new Error('disk full');
    let calls = 0;
    const type = proposalActor({
      ...effects,
      createInstall: async (params) => {
        calls += 1;
        if (failWith !== null) throw failWith;
        await effects.createInstall(params);
      },
    });
    const p = await newProposal();

    const error = await host.send(type, p.request, consent(p.request, t)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Unavailable);
    expect(error).toMatchObject({ code: 'effect_failed' });
    expect((await store.loadSnapshot(PROPOSAL_ACTOR, p.request))?.version).toBe(1);

    // A ServiceError from an effect reaches the caller as it is; an effect's own version
    // conflict is its answer, not a lost commit, so the command is not retried.
    failWith = new Conflict('version_conflict', 'the install moved on');
    await expect(host.send(type, p.request, consent(p.request, t))).rejects.toBe(failWith);
    expect(calls).toBe(2);

    failWith = null;
    expect(await host.send(type, p.request, consent(p.request, t))).toMatchObject({
      outcome: 'granted',
    });
    expect((await store.loadSnapshot(PROPOSAL_ACTOR, p.request))?.version).toBe(2);
  });

  it('reports a snapshot the machine cannot restore as a typed error', async () => {
    // An older build kept proposals under another machine, in a state this one lacks.
    const older = {
      type: PROPOSAL_ACTOR,
      logic: () => createMachine({ id: 'older', initial: 'gone', states: { gone: {} } }),
      answer: () => ({ outcome: 'gone' }),
    };
    const id = submission().request;
    const before = new ActorHost({ store, clock });
    await before.send(older, id, { type: 'anything' });
    await before.close();
    expect((await store.loadSnapshot(PROPOSAL_ACTOR, id))?.snapshot).toMatchObject({
      value: 'gone',
    });

    const type = proposalActor(installEffects(store));
    const p = submission();
    const error = await host
      .send(type, id, { type: 'poll.requested', secret: p.submit.secret })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Unavailable);
    expect(error).toMatchObject({ code: 'actor_failed' });
  });

  it('refuses commands once closed', async () => {
    const type = proposalActor(installEffects(store));
    const p = submission();
    await host.close();
    await expect(host.send(type, p.request, p.submit)).rejects.toMatchObject({
      code: 'host_closed',
    });
  });
});
