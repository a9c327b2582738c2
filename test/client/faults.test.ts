/**
 * The client across lost connections, against the real service (embedded default) and a loopback TCP
 * proxy between the client and the service that the test cuts (`tcp-proxy.ts`), a tail
 * whose connection is cut three times mid-stream delivers every record exactly once and
 * in order, and an append whose first answer is lost lands once.
 */
import { createClient, type LandedRecord } from '@agent-session-service/client';
import { describe, expect, it } from 'vitest';
import { LOG_ONLY } from '../support/app.ts';
import { eventually } from '../support/fault-load.ts';
import { closedAfterEach, startTcpProxy } from '../support/tcp-proxy.ts';
import { drain, message, startClientHarness } from './harness.ts';

const { opened } = closedAfterEach();

/** The service of a test, and a client of it that reaches it through a proxy. */
async function proxied() {
  const h = await startClientHarness(LOG_ONLY);
  opened.push(h);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(h.base).port) });
  opened.push(proxy);
  const client = createClient({
    baseUrl: `http://${proxy.host}:${proxy.port}`,
    installKey: h.install.key,
    retry: { baseDelayMs: 50 },
  });
  return { h, proxy, client };
}

const BATCHES = 4;
const BATCH = 20;

describe('through a proxy that is cut', () => {
  it.each(['ndjson', 'websocket'] as const)(
    'a %s tail cut three times mid-stream delivers every record once, in order',
    async (transport) => {
      const { h, proxy, client } = await proxied();
      const grant = await h.client.openSession('ada');
      // The writer reaches the service directly; only the reader's connection is cut.
      const writer = h.client.session(grant);
      const reader = client.session(grant).tail({ transport });
      const received: LandedRecord[] = [];
      let cuts = 0;

      let batches = 0;
      let head = 1;
      const appendBatch = async () => {
        const batch = Array.from({ length: BATCH }, (_, i) => message(`b${batches}-r${i}`));
        batches += 1;
        head = (await writer.append(batch)).at(-1)?.cursor ?? head;
      };
      await appendBatch();
      for (;;) {
        const next = await reader.next();
        if (next.done === true) {
          expect(next.value).toBe('archived');
          break;
        }
        received.push(next.value);
        const cursor = next.value.envelope.cursor;
        // Halfway through each of the first three batches, while the rest of the batch is
        // on its way, every connection through the proxy is reset and refused a moment.
        if (cursor === head - BATCH / 2 && cuts < 3) {
          cuts += 1;
          proxy.cut('refuse');
          setTimeout(() => {
            proxy.restore();
          }, 150);
        }
        // The last record of a batch: the writer lands the next batch, or archives.
        if (cursor === head) {
          if (batches < BATCHES) await appendBatch();
          else await h.client.archive(grant.session);
        }
      }

      expect(cuts).toBe(3);
      // Four connections at least: the first and one after each cut.
      expect(proxy.accepted).toBeGreaterThanOrEqual(4);
      const total = 1 + BATCHES * BATCH + 1;
      expect(received.map((r) => r.envelope.cursor)).toEqual(
        Array.from({ length: total }, (_, i) => i + 1),
      );
      const texts = received
        .filter((r) => r.envelope.kind.name === 'message.submitted')
        .map((r) => (r.body as { text: string }).text);
      expect(new Set(texts).size).toBe(BATCHES * BATCH);
      expect(received.at(-1)?.envelope.kind.name).toBe('session.archived');
    },
  );

  it('an append whose first answer is lost lands once, answered with its envelopes', async () => {
    const { h, proxy, client } = await proxied();
    const grant = await h.client.openSession('ada');
    const session = client.session(grant);
    // A first call opens the keep-alive connection the append will be sent on.
    expect((await session.status()).head).toBe(1);

    proxy.mute();
    const accepted = proxy.accepted;
    const append = session.append([message('answer lost')], { timeoutMs: 300 });
    // The service lands the batch; its answer is dropped on the way back.
    const direct = h.client.session(grant);
    await eventually('the append landed', async () =>
      (await direct.status()).head === 2 ? true : null,
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    proxy.restore();

    const envelopes = await append;
    expect(envelopes.map((e) => e.cursor)).toEqual([2]);
    // The answer came on a connection of its own: the batch was sent again.
    expect(proxy.accepted).toBeGreaterThan(accepted);
    const { items } = await drain(direct.tail({ to: 3 }));
    expect(items.map((r) => [r.envelope.cursor, r.envelope.kind.name])).toEqual([
      [1, 'session.opened'],
      [2, 'message.submitted'],
    ]);
    expect((await direct.status()).head).toBe(2);
  });
});
