/**
 * What the actor host suites share: proposals made the way vendors make them
 * (`POST /appdoc` on a test app, whose own host commits each one's first snapshot), the
 * commands a host sends them, and the real install effects (`src/consent/install-effects.ts`)
 * over the app's control store. A test's own `ActorHost` over that store stands for another
 * process serving the same actors; two hosts on the app's and a second instance's store
 * connections stand for two.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ProposalEffects } from '../../src/actors/proposal.actor.ts';
import { credentialLookup } from '../../src/auth/opaque.ts';
import { installEffects } from '../../src/consent/install-effects.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import type { Clock } from '../../src/clock.ts';
import { startSecondInstance, startTestApp, type TestApp } from '../support/app.ts';
import { flowOf, vendorDocument } from '../support/flow.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A proposal the vendor made: its request id and expiry, and the poll command. */
export interface Proposal {
  readonly request: string;
  /** When it lapses (Unix ms), as the service answered. */
  readonly expires: number;
  readonly poll: { readonly type: 'poll.requested'; readonly secret: string };
}

/** `POST /appdoc`: a pending proposal (snapshot version 1), and the commands of its vendor. */
export async function propose(harness: TestApp): Promise<Proposal> {
  const answer = await flowOf(harness).expect(201, 'POST', '/appdoc', null, vendorDocument());
  const { request, poll_secret, expires } = answer as {
    request: string;
    poll_secret: string;
    expires: number;
  };
  const secret = credentialLookup(poll_secret, 'ps');
  if (secret === null) throw new Error('the service answered a poll secret of another shape');
  return { request, expires, poll: { type: 'poll.requested', secret } };
}

/** A submission of a proposal no vendor made (for commands that must never run). */
export function submission() {
  const request = `rq_${randomUUID()}`;
  return {
    request,
    submit: {
      type: 'proposal.submitted',
      request,
      vendor: sha256('vendor document'),
      secret: sha256(`ps_${randomUUID()}`),
      install: null,
    } as const,
  };
}

/** An owner's consent that resolves and fits; the install id is derived from the request. */
export function consent(request: string, tenant: string) {
  return {
    type: 'consent.given',
    owner: true,
    resolves: true,
    fits: true,
    grant: {
      install: `in_${sha256(request).slice(0, 32)}`,
      key: sha256(`ik_${randomUUID()}`),
      tenant,
      config: { inference: 'default', extra_tools: [], policies: [] },
    },
  } as const;
}

/** The real install effects over `store`, naming each run in `calls`. */
export function countedEffects(store: ControlStore, calls: string[] = []): ProposalEffects {
  const effects = installEffects(store);
  return {
    createInstall: async (p) => {
      calls.push(`create ${p.install}`);
      await effects.createInstall(p);
    },
    updateInstall: async (p) => {
      calls.push(`update ${p.install}`);
      await effects.updateInstall(p);
    },
  };
}

/** Two processes' connections to one service's stores: the test app's and a second instance's. */
export interface Processes {
  readonly harness: TestApp;
  readonly stores: readonly [ControlStore, ControlStore];
  close(): Promise<void>;
}

/** Starts a test app on `clock` and a second instance of it. */
export async function processes(clock: Clock): Promise<Processes> {
  const harness = await startTestApp({ clock });
  const second = await startSecondInstance(harness);
  return {
    harness,
    stores: [harness.stores.control, second.stores.control],
    close: async () => {
      await second.close();
      await harness.close();
    },
  };
}
