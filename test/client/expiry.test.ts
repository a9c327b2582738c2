/**
 * A tail ends at its token's expiry (the service's last line
 * `Err token_expired`, decisions row 68) instead of reconnecting, over both transports.
 * The service runs on a manual clock set just before the token lapses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { LOG_ONLY } from '../support/app.ts';
import { startClientHarness, type ClientHarness } from './harness.ts';

const clock = new ManualClock(Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e9));
let h: ClientHarness;
beforeAll(async () => {
  h = await startClientHarness({ ...LOG_ONLY, clock });
});
afterAll(async () => {
  await h.close();
});

describe('a tail', () => {
  it.each(['ndjson', 'websocket'] as const)(
    'over %s ends when its token expires',
    async (transport) => {
      const grant = await h.client.openSession('ada');
      // The service's expiry timer is armed for what is left of the token: 300 ms.
      clock.set(grant.expires - 300);
      const tail = h.client.session(grant).tail({ transport });
      const first = await tail.next();
      expect(first.done === true ? null : first.value.envelope.kind.name).toBe('session.opened');
      // When the timer fires, the service's clock has passed the expiry.
      clock.set(grant.expires + 1);
      const started = Date.now();
      const end = await tail.next();
      expect(end).toEqual({ done: true, value: 'token_expired' });
      expect(Date.now() - started).toBeLessThan(5000);
    },
  );
});
