/**
 * The client against the real service (embedded default): it
 * opens sessions and mints tokens, appends with an Idempotency-Key, tails over NDJSON and
 * WebSocket to `to` and to `session.archived`, and every refusal is one `ServiceProblem`.
 */
import { createClient, ServiceProblem, type LandedRecord } from '@agent-session-service/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_ONLY } from '../support/app.ts';
import { drain, message, startClientHarness, type ClientHarness } from './harness.ts';

let h: ClientHarness;
beforeAll(async () => {
  h = await startClientHarness(LOG_ONLY);
});
afterAll(async () => {
  await h.close();
});

const kinds = (records: readonly LandedRecord[]) => records.map((r) => r.envelope.kind.name);

describe('the client', () => {
  it('opens a session, appends batches and tails them to `to` over both transports', async () => {
    const grant = await h.client.openSession('ada');
    expect(grant.session).toMatch(/^[0-9a-f]{72}$/);
    const session = h.client.session(grant);
    const first = await session.append([message('one'), message('two')]);
    const second = await session.append([message('three')]);
    expect([...first, ...second].map((e) => e.cursor)).toEqual([2, 3, 4]);

    for (const transport of ['ndjson', 'websocket'] as const) {
      const { items, end } = await drain(session.tail({ from: 1, to: 5, transport }));
      expect(items.map((r) => r.envelope.cursor)).toEqual([1, 2, 3, 4]);
      expect(kinds(items)).toEqual([
        'session.opened',
        ...Array<string>(3).fill('message.submitted'),
      ]);
      expect(end).toBe('to');
    }
    const status = await session.status();
    expect(status.head).toBe(4);
  });

  it('ends a tail at `to` when its last record arrives, without waiting to reconnect', async () => {
    // A reconnect would wait a minute: a tail that waits for one cannot end in time.
    const slow = createClient({
      baseUrl: h.base,
      installKey: h.install.key,
      retry: { baseDelayMs: 60_000 },
    });
    const session = slow.session(await slow.openSession('ada'));
    await session.append([message('one'), message('two')]);
    for (const transport of ['ndjson', 'websocket'] as const) {
      const { items, end } = await drain(session.tail({ from: 1, to: 4, transport }));
      expect([items.length, end]).toEqual([3, 'to']);
    }
  }, 10_000);

  it('answers the landed envelopes again when a batch is resent with its key', async () => {
    const session = h.client.session(await h.client.openSession('ada'));
    const key = `k-${crypto.randomUUID()}`;
    const landed = await session.append([message('once')], { idempotencyKey: key });
    const again = await session.append([message('once')], { idempotencyKey: key });
    expect(again).toEqual(landed);
    expect((await session.status()).head).toBe(2);
  });

  it('follows a tail until the session is archived, over both transports', async () => {
    for (const transport of ['ndjson', 'websocket'] as const) {
      const grant = await h.client.openSession('ada');
      const session = h.client.session(grant);
      const tail = drain(session.tail({ transport }));
      await session.append([message('before archive')]);
      await h.client.archive(grant.session);
      const { items, end } = await tail;
      expect(kinds(items)).toEqual(['session.opened', 'message.submitted', 'session.archived']);
      expect(end).toBe('archived');
    }
  });

  it('ends a tail when its signal aborts', async () => {
    const session = h.client.session(await h.client.openSession('ada'));
    const controller = new AbortController();
    const seen: number[] = [];
    const tail = session.tail({ signal: controller.signal });
    for await (const record of tail) {
      seen.push(record.envelope.cursor);
      controller.abort();
    }
    expect(seen).toEqual([1]);
  });

  it('mints a fresh token for a session', async () => {
    const grant = await h.client.openSession('ada');
    const minted = await h.client.mintToken(grant.session, 'ada');
    expect(minted.session).toBe(grant.session);
    expect(minted.token).not.toBe(grant.token);
    const { items } = await drain(h.client.session(minted).tail({ to: 2 }));
    expect(kinds(items)).toEqual(['session.opened']);
  });

  it('rotates an install’s key: the old key is refused, the new one opens sessions', async () => {
    const install = await h.flow.install();
    const owner = createClient({ baseUrl: h.base, consoleToken: install.owner.token });
    const key = await owner.rotateKey(install.id);
    expect(key).toMatch(/^ik_/);
    expect(key).not.toBe(install.key);
    const old = createClient({ baseUrl: h.base, installKey: install.key });
    await expect(old.openSession('ada')).rejects.toMatchObject({ status: 401 });
    const rotated = owner.with({ installKey: key });
    expect((await rotated.openSession('ada')).session).toMatch(/^[0-9a-f]{72}$/);
  });

  it('throws every refusal as a ServiceProblem with the problem body’s members', async () => {
    const stranger = createClient({ baseUrl: h.base, installKey: 'ik_wrong' });
    const refused = await stranger.openSession('ada').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceProblem);
    expect(refused).toMatchObject({ status: 401, title: 'Unauthorized' });

    const invalid = await h.client
      .propose({ appdoc: 1, name: '', description: 'x', tools: [] })
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(ServiceProblem);
    const problem = invalid as ServiceProblem;
    expect(problem.status).toBe(400);
    expect(problem.code).toBe('invalid_request');
    expect(problem.field ?? problem.errors[0]?.field).toMatch(/^body\./);
    expect(problem.reason ?? problem.errors[0]?.reason).toEqual(expect.any(String));

    const grant = await h.client.openSession('ada');
    await h.client.archive(grant.session);
    const archived = await h.client
      .session(grant)
      .append([message('late')])
      .catch((error: unknown) => error);
    expect(archived).toMatchObject({ status: 409, code: 'session_archived' });
  });
});
