/**
 * What the Redis log store leaves on the server and how it stamps: key layout and hash
 * tags, cursor-to-id mapping, scripts surviving a flush, `at` from Redis TIME or the
 * injected clock, and refusing what it cannot serve.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import { Unavailable } from '../../../src/errors.ts';
import type { PendingRecord } from '../../../src/storage/log-store.ts';
import { openRedisLogStore } from '../../../src/storage/redis/store.ts';
import { TEST_REDIS_URL } from '../../support/services.ts';
import { redisFixture, type RedisFixture } from './redis-fixture.ts';

let fixture: RedisFixture;
beforeAll(async () => {
  fixture = await redisFixture();
});
afterAll(async () => {
  await fixture.cleanup();
});

const record = (text: string, overrides: Partial<PendingRecord> = {}): PendingRecord => ({
  kind: { name: 'message.submitted', version: 1 },
  producer: 'principal:alice',
  to: null,
  idem: null,
  body: JSON.stringify({ text }),
  ...overrides,
});

const oneOff = (stream: string, records: PendingRecord[]) =>
  ({ stream, records, key: null, fingerprint: '' }) as const;

describe('redis log store layout', () => {
  it('keeps a session in three keys that share its hash tag, one entry c-0 per cursor', async () => {
    const store = await fixture.open();
    const stream = `s-${randomUUID()}`;
    await store.append({ stream, records: [record('a'), record('b')], key: 'k', fingerprint: 'f' });
    await store.archive(stream, record('end'));
    const base = `${fixture.prefix}{${stream}}`;
    const keys = (await fixture.keys()).filter((key) => key.includes(stream)).sort();
    expect(keys).toEqual([`${base}:keys`, `${base}:log`, `${base}:meta`]);
    const entries = await fixture.admin.xrange(`${base}:log`, '-', '+');
    expect(entries.map(([id]) => id)).toEqual(['1-0', '2-0', '3-0']);
    // Fields (keys.ts FIELD): at, kind as name@version, producer, to and idem only when
    // not null, body; no size (the body's bytes); `f` marks the archiving record.
    const fields = entries.map(([, values]) => values.filter((_, i) => i % 2 === 0));
    expect(fields).toEqual([
      ['a', 'k', 'p', 'b'],
      ['a', 'k', 'p', 'b'],
      ['a', 'k', 'p', 'b', 'f'],
    ]);
    expect(entries[0]?.[1].slice(2, 6)).toEqual([
      'k',
      'message.submitted@1',
      'p',
      'principal:alice',
    ]);
    expect(await fixture.admin.hgetall(`${base}:meta`)).toMatchObject({
      head: '3',
      archived: '1',
    });
  });

  it('keeps an empty `to` and `idem` apart from null', async () => {
    const store = await fixture.open();
    const stream = `s-${randomUUID()}`;
    const landed = await store.append(
      oneOff(stream, [record('empty', { to: '', idem: '' }), record('null')]),
    );
    const read = await store.read(stream, { from: 1 });
    expect(read).toEqual(landed.records);
    expect(read.map((r) => [r.envelope.to, r.envelope.idem])).toEqual([
      ['', ''],
      [null, null],
    ]);
  });

  it('runs its scripts again after the server dropped its script cache', async () => {
    const store = await fixture.open();
    const stream = `s-${randomUUID()}`;
    await store.append(oneOff(stream, [record('before')]));
    await fixture.admin.script('FLUSH');
    const after = await store.append(oneOff(stream, [record('after')]));
    expect(after.records[0]?.envelope.cursor).toBe(2);
    await fixture.admin.script('FLUSH');
    expect((await store.archive(stream, record('end'))).envelope.cursor).toBe(3);
  });
});

describe('redis log store time', () => {
  const serverMs = async () => {
    const [seconds, micros] = await fixture.admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  it('stamps `at` from Redis TIME when no clock is given (decisions row 13)', async () => {
    const store = await fixture.open();
    const before = await serverMs();
    const landed = await store.append(oneOff(`s-${randomUUID()}`, [record('a'), record('b')]));
    const after = await serverMs();
    for (const { envelope } of landed.records) {
      expect(envelope.at).toBeGreaterThanOrEqual(before);
      expect(envelope.at).toBeLessThanOrEqual(after);
    }
  });

  it('stamps the injected clock, and never goes back along a stream when it does', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const store = await fixture.open({ clock });
    const stream = `s-${randomUUID()}`;
    const first = await store.append(oneOff(stream, [record('a')]));
    expect(first.records[0]?.envelope.at).toBe(Date.UTC(2026, 0, 1));
    clock.set(Date.UTC(2025, 0, 1));
    const second = await store.append(oneOff(stream, [record('b')]));
    expect(second.records[0]?.envelope.at).toBe(Date.UTC(2026, 0, 1));
    clock.set(Date.UTC(2027, 0, 1));
    expect((await store.archive(stream, record('end'))).envelope.at).toBe(Date.UTC(2027, 0, 1));
    expect((await store.read(stream, { from: 1 })).map((r) => r.envelope.at)).toEqual([
      Date.UTC(2026, 0, 1),
      Date.UTC(2026, 0, 1),
      Date.UTC(2027, 0, 1),
    ]);
  });
});

describe('redis log store refusals', () => {
  it('answers unavailable when the server does not answer', async () => {
    const failure = await openRedisLogStore({ url: 'redis://127.0.0.1:1' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Unavailable);
    expect(failure).toMatchObject({ code: 'store_unavailable' });
  });

  it('refuses a key prefix that would break the hash tag', async () => {
    await expect(openRedisLogStore({ url: TEST_REDIS_URL, prefix: 'a{b}:' })).rejects.toThrow(
      /may not contain/,
    );
  });
});
