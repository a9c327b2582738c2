/**
 * A tail ends when its token stops standing (the service's last line `Err token_revoked`)
 * instead of reconnecting, over both transports: here the install key that minted the
 * session's token is rotated through the console API.
 */
import { createClient } from '@agent-session-service/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_ONLY } from '../support/app.ts';
import { startClientHarness, type ClientHarness } from './harness.ts';

let h: ClientHarness;
beforeAll(async () => {
  h = await startClientHarness(LOG_ONLY);
});
afterAll(async () => {
  await h.close();
});

describe('a tail', () => {
  it.each(['ndjson', 'websocket'] as const)(
    'over %s ends when the key that minted its token is rotated',
    async (transport) => {
      const install = await h.flow.install();
      const client = createClient({ baseUrl: h.base, installKey: install.key });
      const grant = await client.openSession('ada');
      const tail = client.session(grant).tail({ transport });
      const first = await tail.next();
      expect(first.done === true ? null : first.value.envelope.kind.name).toBe('session.opened');
      await h.flow.expect(200, 'POST', `/installs/${install.id}/key`, install.owner.token);
      const started = Date.now();
      expect(await tail.next()).toEqual({ done: true, value: 'token_revoked' });
      expect(Date.now() - started).toBeLessThan(5000);
    },
  );
});
