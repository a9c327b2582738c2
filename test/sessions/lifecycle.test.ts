/**
 * Opening and archiving through the hosted session actor (3.1 rows 1 and 3, decisions
 * row 60): two hosts over the same stores stand for two processes; archiving from both at
 * once lands one `session.archived` and answers both, and the actor's state follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorHost } from '../../src/actors/actor-host.ts';
import { SESSION_ACTOR } from '../../src/actors/session.actor.ts';
import { systemEntropy } from '../../src/clock.ts';
import { SessionDirectory } from '../../src/sessions/directory.ts';
import { deriveSessionIdKey } from '../../src/sessions/ids.ts';
import { SessionLifecycle } from '../../src/sessions/lifecycle.ts';
import { SessionTokens } from '../../src/sessions/tokens.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { flowOf } from '../support/flow.ts';

let harness: TestApp;
const hosts: ActorHost[] = [];

beforeAll(async () => {
  harness = await startTestApp();
});
afterAll(async () => {
  await Promise.all(hosts.map((host) => host.close()));
  await harness.close();
});

function lifecycle(): SessionLifecycle {
  const host = new ActorHost({ store: harness.stores.control, clock: harness.deps.clock });
  hosts.push(host);
  return new SessionLifecycle({
    host,
    logStore: harness.stores.log,
    directory: new SessionDirectory(harness.stores.control),
    tokens: new SessionTokens({
      tokens: harness.deps.tokens,
      clock: harness.deps.clock,
      entropy: systemEntropy,
    }),
    entropy: systemEntropy,
    idKey: deriveSessionIdKey(harness.keys.secretsKey),
    catalogs: {
      controlStore: harness.stores.control,
      clock: harness.deps.clock,
      entropy: systemEntropy,
      baseUrl: harness.deps.baseUrl,
    },
    turns: harness.services.turns,
  });
}

/** An install made by consent, read back as the routes see it. */
async function installed() {
  const install = await flowOf(harness).install();
  const stored = await harness.stores.control.get('install', install.tenant, install.id);
  if (stored === null) throw new Error(`install ${install.id} is not stored`);
  return stored;
}

describe('the session lifecycle', () => {
  it('opens once: session.opened at cursor 1, the directory filed at its `at`', async () => {
    const install = await installed();
    const answer = await lifecycle().open(install, 'ada', { rounds: 16 });
    const records = await harness.stores.log.read(answer.session, { from: 1 });
    expect(records.map((r) => r.envelope.kind.name)).toEqual(['session.opened']);
    const entry = await new SessionDirectory(harness.stores.control).get(answer.session);
    expect(entry?.value.opened).toBe(records[0]?.envelope.at);
    const snapshot = await harness.stores.control.loadSnapshot(SESSION_ACTOR, answer.session);
    expect(snapshot?.snapshot).toMatchObject({ value: 'live' });
  });

  it('archives from two hosts at once: one final record, both answered, state archived', async () => {
    const install = await installed();
    const one = lifecycle();
    const two = lifecycle();
    const answer = await one.open(install, 'ada', { rounds: 16 });
    const session = await new SessionDirectory(harness.stores.control).get(answer.session);
    if (session === null) throw new Error('the session was not filed');
    await Promise.all([
      one.archive(session.value, { by: 'install' }),
      two.archive(session.value, { by: 'console', user: 'owner' }),
      one.archive(session.value, { by: 'install' }),
    ]);
    const records = await harness.stores.log.read(answer.session, { from: 1 });
    expect(records.map((r) => r.envelope.kind.name)).toEqual([
      'session.opened',
      'session.archived',
    ]);
    const snapshot = await harness.stores.control.loadSnapshot(SESSION_ACTOR, answer.session);
    expect(snapshot?.snapshot).toMatchObject({ value: 'archived' });
    const filed = await new SessionDirectory(harness.stores.control).get(answer.session);
    expect(filed?.value).toMatchObject({ archived: true, archivedAt: records[1]?.envelope.at });
  });

  it('answers 404 for a session it never opened', async () => {
    const install = await installed();
    const answer = await lifecycle().open(install, 'ada', { rounds: 16 });
    const session = await new SessionDirectory(harness.stores.control).get(answer.session);
    if (session === null) throw new Error('the session was not filed');
    const stranger = { ...session.value, id: 'f'.repeat(72) };
    await expect(lifecycle().archive(stranger, { by: 'install' })).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });
});
