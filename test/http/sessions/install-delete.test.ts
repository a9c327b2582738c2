/**
 * Decisions rows 61 and 76: deleting an install ends its sessions. The install comes from
 * the real vendor flow (propose, consent, poll), the sessions from its key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import {
  consent,
  flowApp,
  keyHeaders,
  ownerWithOption,
  poll,
  propose,
} from '../proposals/flow-client.ts';

let harness: TestApp;

beforeAll(async () => {
  ({ harness } = await flowApp());
});
afterAll(async () => {
  await harness.close();
});

describe('deleting an install', () => {
  it('archives every live session of the install with by install_deleted', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const granted = await consent(harness, owner, proposal.request, { inference: 'fast' });
    expect(granted.statusCode, granted.body).toBe(200);
    const receipt = await poll(harness, proposal);
    expect(receipt.statusCode, receipt.body).toBe(200);
    const { install, key } = receipt.json<{ install: string; key: string }>();

    const opened: { session: string; token: string }[] = [];
    for (const principal of ['ada', 'grace', 'alan']) {
      const response = await harness.app.inject({
        method: 'POST',
        url: `/sessions?principal=${principal}`,
        headers: keyHeaders(key),
        payload: {},
      });
      expect(response.statusCode, response.body).toBe(201);
      opened.push(response.json());
    }
    // One session is archived by the install first: it must not be archived twice.
    const first = opened[0];
    if (first === undefined) throw new Error('no session opened');
    const archived = await harness.app.inject({
      method: 'POST',
      url: `/sessions/${first.session}/archive`,
      headers: keyHeaders(key),
    });
    expect(archived.statusCode, archived.body).toBe(200);

    const deleted = await harness.app.inject({
      method: 'DELETE',
      url: `/installs/${install}`,
      headers: owner.headers,
    });
    expect(deleted.statusCode, deleted.body).toBe(204);

    const listed = await harness.app.inject({
      method: 'GET',
      url: '/console/sessions',
      headers: owner.headers,
    });
    const rows = listed.json<{ items: { id: string; archived: boolean }[] }>().items;
    for (const [index, session] of opened.entries()) {
      expect(rows.find((row) => row.id === session.session)).toMatchObject({ archived: true });
      // A deleted install ends its sessions' tokens too.
      const status = await harness.app.inject({
        method: 'GET',
        url: `/sessions/${session.session}/status`,
        headers: { authorization: `Bearer ${session.token}` },
      });
      expect(status.statusCode, status.body).toBe(401);
      expect(status.json()).toMatchObject({ code: 'invalid_token' });
      const records = await harness.stores.log.read(session.session, { from: 1 });
      const finals = records.filter((r) => r.envelope.kind.name === 'session.archived');
      expect(finals).toHaveLength(1);
      expect(JSON.parse(finals[0]?.body ?? '{}')).toEqual({
        by: index === 0 ? 'install' : 'install_deleted',
      });
    }
    // The old key reads as gone (row 76).
    const gone = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(gone.statusCode).toBe(404);
  });
});
