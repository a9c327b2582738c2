import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAIL_LIMITS } from '../../../src/http/tails/limits.ts';
import { LOG_ONLY, startTestApp, type TestApp, type TestAppOptions } from '../../support/app.ts';
import { TEST_REDIS_URL } from '../../support/services.ts';
import {
  append,
  archive,
  cursors,
  ndjsonTail,
  openTestSession,
  record,
  tokenFor,
  within,
  wsTail,
  type OpenTail,
} from './tail-fixture.ts';

const TAILS = 200;
const APPENDS = 300;

describe.each<[string, TestAppOptions]>([
  ['the embedded default', {}],
  ['Redis', { redisUrl: TEST_REDIS_URL }],
])(`${TAILS} concurrent tails and a fast appender on %s`, (_backend, options) => {
  let harness: TestApp;
  let base: string;

  beforeAll(async () => {
    harness = await startTestApp({ ...LOG_ONLY, ...options });
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('every tail receives every record once and in order', async () => {
    const session = await openTestSession(harness);
    // A token holds at most TAILS_PER_CREDENTIAL (50) tails: a few tokens share them.
    const tokens = await Promise.all(
      Array.from({ length: Math.ceil(TAILS / TAIL_LIMITS.perCredential) }, () =>
        tokenFor(harness, session),
      ),
    );
    const path = `/sessions/${session.id}/events?from=1`;
    // Half over NDJSON, half over WebSocket, all attached before the first append.
    const tails: OpenTail[] = await Promise.all(
      Array.from({ length: TAILS }, (_, i) => {
        const token = tokens[Math.floor(i / TAIL_LIMITS.perCredential)] ?? '';
        const headers = { authorization: `Bearer ${token}` };
        return i % 2 === 0
          ? ndjsonTail(base, path, headers)
          : wsTail(`${base.replace('http', 'ws')}${path}`, { headers });
      }),
    );
    // One record per append, as fast as the service takes them over HTTP, some in small
    // batches (the bound on the whole test guards against a hang, on a shared machine).
    for (let i = 0; i < APPENDS; i += 1) {
      const size = i % 10 === 0 ? 3 : 1;
      await append(
        harness,
        session,
        Array.from({ length: size }, (_, j) => record('message.submitted', { text: `${i}.${j}` })),
      );
    }
    await archive(harness, session);
    const head = (await harness.stores.log.head(session.id))?.head ?? 0;
    expect(head).toBe(1 + APPENDS + (APPENDS / 10) * 2 + 1);
    await within(30_000, Promise.all(tails.map((tail) => tail.done)), 'every tail to end');
    const expected = Array.from({ length: head }, (_, i) => i + 1);
    for (const [i, tail] of tails.entries()) {
      expect(cursors(tail.lines), `tail ${i}`).toEqual(expected);
      expect(tail.lines).toHaveLength(head);
    }
  }, 120_000);
});
