/**
 * An append whose answer is lost: the service sends it to the store, the
 * store runs it, and the link fails before the answer comes back (the proxy drops what
 * the server answers, `TcpProxy.mute`). The client is answered 503 with `Retry-After`
 * within the store's command timeout, never left hanging, and when it tries again with
 * the same `Idempotency-Key` its record is in the log once, at the cursor it is answered.
 */
import { describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.ts';
import { Answers, eventually, send } from '../support/fault-load.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import { closedAfterEach, throughProxy } from '../support/tcp-proxy.ts';
import { listeningClient } from '../turns/turn-client.ts';

const { opened, proxyTo } = closedAfterEach();

describe('an append whose answer was lost', () => {
  it.each([
    // Redis holds the log: the append script runs, its answer is lost.
    ['Redis', { stores: 'redis+postgres', ranBeforeRetry: true }],
    // PostgreSQL holds everything: the statement in flight (the turn's due mark, before
    // the append) runs, its answer is lost.
    ['PostgreSQL', { stores: 'postgres', ranBeforeRetry: false }],
  ] as const)(
    'on %s is answered 503, and lands once when the client tries again with the same key',
    async (_name, { stores, ranBeforeRetry }) => {
      const postgres = await proxyTo(TEST_DATABASE_URL);
      const redis = stores === 'postgres' ? null : await proxyTo(TEST_REDIS_URL);
      const harness = await startTestApp({
        databaseUrl: throughProxy(TEST_DATABASE_URL, postgres),
        ...(redis === null ? {} : { redisUrl: throughProxy(TEST_REDIS_URL, redis) }),
      });
      const muted = redis ?? postgres;
      opened.push(harness);
      const client = await listeningClient(harness);
      const { key } = await client.install();
      const held = await client.open(key);
      const answers = new Answers();
      const append = (text: string) =>
        send(answers, `${client.base}/sessions/${held.session}/events`, {
          method: 'POST',
          token: held.token,
          headers: { 'content-type': 'application/json', 'idempotency-key': text },
          body: JSON.stringify([
            { kind: { name: 'message.submitted', version: 1 }, body: { text } },
          ]),
        });
      const copies = async (text: string): Promise<number[] | null> => {
        try {
          const log = await client.log(held);
          return log
            .filter((r) => r.envelope.kind.name === 'message.submitted' && r.body.text === text)
            .map((r) => r.envelope.cursor);
        } catch {
          return null; // Redis not back yet
        }
      };
      expect((await append('first'))?.status).toBe(200);

      // Redis runs the append script; its answer never comes back.
      muted.mute();
      const started = Date.now();
      const lost = await append('answer-lost');
      const waited = Date.now() - started;
      muted.restore();
      expect(lost?.status).toBe(503);
      expect(lost?.headers.get('retry-after')).toBe('1');
      const landed = await eventually('the log served again', () => copies('answer-lost'));

      const retried = await eventually('the retry answered 200', async () => {
        const answer = await append('answer-lost');
        return answer?.status === 200 ? answer : null;
      });
      const cursor = (retried.body as { cursor: number }[])[0]?.cursor;
      const after = await eventually('the log served again', () => copies('answer-lost'));
      console.log(
        `append with its answer lost (${stores}): 503 after ${waited} ms; in the log before the retry at ${JSON.stringify(landed)}; ` +
          `the retry answered cursor ${cursor}; in the log after it at ${JSON.stringify(after)}`,
      );
      if (ranBeforeRetry) expect(landed).toEqual([cursor]);
      else expect([[], [cursor]]).toContainEqual(landed);
      expect(after).toEqual([cursor]);
      expect(answers.faults).toEqual([]);
    },
  );
});
