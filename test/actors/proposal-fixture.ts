/**
 * What the actor host suites share: SQLite control stores in a fresh temp folder (several
 * instances on one file stand for several processes), real install effects over a control
 * store, and the proposal commands.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ProposalEffects } from '../../src/actors/proposal.actor.ts';
import { Conflict } from '../../src/errors.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import { openSqliteControlStore } from '../../src/storage/sql/open.ts';

/** Control stores on one SQLite file, each with its own connection. */
export interface StoreFolder {
  open(): Promise<ControlStore>;
  cleanup(): Promise<void>;
}

export async function storeFolder(): Promise<StoreFolder> {
  const folder = await mkdtemp(path.join(tmpdir(), 'actors-'));
  const file = path.join(folder, 'service.sqlite');
  const secretsKey = randomBytes(32);
  const opened: ControlStore[] = [];
  return {
    open: async () => {
      const store = await openSqliteControlStore({ file, secretsKey });
      opened.push(store);
      return store;
    },
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await rm(folder, { recursive: true, force: true });
    },
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A fresh proposal: its request id, poll secret hash and submission command. */
export function newProposal(install: string | null = null) {
  const request = `req-${randomUUID()}`;
  const secret = sha256(`ps_${randomUUID()}`);
  return {
    request,
    secret,
    submit: {
      type: 'proposal.submitted',
      request,
      vendor: sha256('vendor document'),
      secret,
      install,
    } as const,
    poll: { type: 'poll.requested', secret } as const,
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
      install: `inst-${sha256(request).slice(0, 16)}`,
      key: `ik_${randomUUID()}`,
      tenant,
      config: {},
    },
  } as const;
}

/**
 * Install effects over a real control store. `createInstall` is idempotent as the host
 * requires: the install id derives from the request, and an existing one is success.
 */
export function installEffects(store: ControlStore, calls: string[] = []): ProposalEffects {
  return {
    createInstall: async (p) => {
      calls.push(`create ${p.install}`);
      const value = {
        request: p.request,
        vendor: p.vendor,
        key: sha256(p.key ?? ''),
        config: p.config,
      };
      await store
        .write([{ op: 'put', kind: 'install', scope: p.tenant, id: p.install, value, expect: 0 }])
        .catch((error: unknown) => {
          if (!(error instanceof Conflict)) throw error;
        });
    },
    updateInstall: async (p) => {
      calls.push(`update ${p.install}`);
      const value = { request: p.request, vendor: p.vendor, config: p.config };
      await store.write([
        { op: 'put', kind: 'install', scope: p.tenant, id: p.install, value, expect: null },
      ]);
    },
  };
}
