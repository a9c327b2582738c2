/**
 * The shared tail reader: one subscriber connection per store instance however many
 * tails it serves, prompt delivery on streams that join while it follows others, bounded
 * buffers that fall back to reading the log, and tails fed by other instances.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogStore, StoredRecord } from '../../../src/storage/log-store.ts';
import { collect, pendingRecord, within } from '../../contracts/log-store-fixture.ts';
import { entryId, FIELD, sessionKeys } from '../../../src/storage/redis/keys.ts';
import { redisFixture, type RedisFixture } from './redis-fixture.ts';

let fixture: RedisFixture;
beforeAll(async () => {
  fixture = await redisFixture();
});
afterAll(async () => {
  await fixture.cleanup();
});

const append = (store: LogStore, stream: string, count: number) =>
  store.append({
    stream,
    records: Array.from({ length: count }, (_, i) => pendingRecord(`r${i}`)),
    key: null,
    fingerprint: '',
  });

const cursors = (records: readonly StoredRecord[]) => records.map((r) => r.envelope.cursor);
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The clients CLIENT LIST shows under a connection name, as field maps. */
async function clientsNamed(name: string): Promise<Map<string, string>[]> {
  const list = await fixture.admin.client('LIST');
  if (typeof list !== 'string') throw new Error('CLIENT LIST answered no text');
  return list
    .split('\n')
    .map((line) => new Map(line.split(' ').map((pair) => pair.split('=', 2) as [string, string])))
    .filter((client) => client.get('name') === name);
}

/**
 * Polls CLIENT LIST until the instance's reader is subscribed to `channels` wake channels
 * (sharded Pub/Sub); answers the instance's reader connections.
 */
async function subscribedReader(name: string, channels: number): Promise<Map<string, string>[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const readers = await clientsNamed(`${name}:reader`);
    const subscribed = readers.some((r) => r.get('ssub') === String(channels));
    if (subscribed || Date.now() > deadline) return readers;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('redis tails share one reader per instance', () => {
  it('serves 50 tails of one stream and 10 of others with one subscriber connection', async () => {
    const name = `fanout-${randomBytes(4).toString('hex')}`;
    const store = await fixture.open({ name });
    const writer = await fixture.open();
    const stream = `s-${randomUUID()}`;
    const others = Array.from({ length: 10 }, () => `s-${randomUUID()}`);
    const tails = Array.from({ length: 50 }, () =>
      collect(store.tail(stream, { from: 1, to: 21 })),
    );
    const otherTails = others.map((other) => collect(store.tail(other, { from: 0, to: 2 })));
    const readers = await subscribedReader(name, 11);
    expect(readers).toHaveLength(1);
    // One channel per followed stream, however many tails follow it.
    expect(readers[0]?.get('ssub')).toBe('11');
    expect(await clientsNamed(`${name}:command`)).toHaveLength(1);
    await append(writer, stream, 8);
    await append(writer, stream, 12);
    await Promise.all(others.map((other) => append(writer, other, 1)));
    for (const seen of await within(5000, Promise.all(tails), 'the 50 tails')) {
      expect(cursors(seen)).toEqual(upTo(20));
    }
    for (const seen of await within(5000, Promise.all(otherTails), 'the other tails')) {
      expect(cursors(seen)).toEqual([1]);
    }
    expect(await clientsNamed(`${name}:reader`)).toHaveLength(1);
  });

  it('delivers at once on a stream that joins while the reader follows others', async () => {
    const name = `join-${randomBytes(4).toString('hex')}`;
    const store = await fixture.open({ name });
    const writer = await fixture.open();
    const abort = new AbortController();
    const idle = collect(store.tail(`s-${randomUUID()}`, { from: 1, signal: abort.signal }));
    await subscribedReader(name, 1);
    // Each new stream must be read well before the 5 s backstop would read it.
    for (let run = 0; run < 5; run++) {
      const stream = `s-${randomUUID()}`;
      const tail = collect(store.tail(stream, { from: 1, to: 2 }));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const started = Date.now();
      await append(writer, stream, 1);
      expect(cursors(await within(5000, tail, 'the joining tail'))).toEqual([1]);
      expect(Date.now() - started).toBeLessThan(1000);
    }
    abort.abort();
    expect(await within(2000, idle, 'the idle tail')).toEqual([]);
  });

  it('falls back to reading the log when a slow tail overflows its buffer', async () => {
    const store = await fixture.open({ tailBuffer: 4 });
    const writer = await fixture.open();
    const stream = `s-${randomUUID()}`;
    const tail = store.tail(stream, { from: 1, to: 302 })[Symbol.asyncIterator]();
    const first = tail.next();
    await append(writer, stream, 1);
    const landed = await within(5000, first, 'the first record');
    expect(landed.done === true ? undefined : landed.value.envelope.cursor).toBe(1);
    // Paused at its first record, the tail is subscribed: 300 records overflow its 4 slots.
    for (let i = 0; i < 30; i++) await append(writer, stream, 10);
    const seen: number[] = [];
    for (;;) {
      const next = await tail.next();
      if (next.done === true) break;
      seen.push(next.value.envelope.cursor);
      // Slow while more lands: it overflows again mid-way.
      if (seen.length % 50 === 0) {
        await append(writer, stream, 10);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    expect(seen).toEqual(upTo(301).slice(1));
  });

  it('keeps its tails going when the reader connection is killed', async () => {
    const name = `killed-${randomBytes(4).toString('hex')}`;
    const store = await fixture.open({ name });
    const writer = await fixture.open();
    const stream = `s-${randomUUID()}`;
    const tail = collect(store.tail(stream, { from: 1, to: 4 }));
    await append(writer, stream, 1);
    const [reader] = await subscribedReader(name, 1);
    await fixture.admin.client('KILL', 'ID', reader?.get('id') ?? '');
    await append(writer, stream, 2);
    // Well before the 5 s backstop: the reader follows its streams anew on a new connection.
    const started = Date.now();
    expect(cursors(await within(5000, tail, 'the tail after the kill'))).toEqual([1, 2, 3]);
    expect(Date.now() - started).toBeLessThan(2000);
    // The tail has all it asked for and left: the new connection follows nothing now.
    const [again] = await subscribedReader(name, 0);
    expect(again?.get('id')).not.toBe(reader?.get('id'));
  });

  it('reads every followed stream in its backstop round, spread over it, when wakes are lost', async () => {
    const name = `backstop-${randomBytes(4).toString('hex')}`;
    const store = await fixture.open({ name });
    const streams = Array.from({ length: 200 }, () => `s-${randomUUID()}`);
    const arrivals = streams.map(async (stream) => {
      const [record] = await collect(store.tail(stream, { from: 1, to: 2 }));
      return { cursor: record?.envelope.cursor, at: Date.now() };
    });
    await subscribedReader(name, streams.length);
    // Entries written as the append script writes them, with no wake published.
    const started = Date.now();
    for (const stream of streams) {
      const { log } = sessionKeys(fixture.prefix, stream);
      await fixture.admin.xadd(
        log,
        entryId(1),
        FIELD.at,
        String(started),
        FIELD.kind,
        'message.submitted@1',
        FIELD.producer,
        'principal:ada',
        FIELD.body,
        '{"text":"hi"}',
      );
    }
    const seen = await within(7000, Promise.all(arrivals), 'the backstop reads');
    expect(seen.map((arrival) => arrival.cursor)).toEqual(streams.map(() => 1));
    const times = seen.map((arrival) => arrival.at - started);
    // A round is 5 s, read a fiftieth at a time: not all of it in one burst.
    expect(Math.max(...times)).toBeLessThan(6000);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(1000);
  });

  it('follows appends racing from two other instances, each record once in order', async () => {
    const [tailing, one, two] = [await fixture.open(), await fixture.open(), await fixture.open()];
    const stream = `s-${randomUUID()}`;
    const tail = collect(tailing.tail(stream, { from: 1, to: 401 }));
    await Promise.all(
      [one, two].map(async (store) => {
        for (let i = 0; i < 50; i++) await append(store, stream, 4);
      }),
    );
    const seen = await within(10_000, tail, 'the tail');
    expect(cursors(seen)).toEqual(upTo(400));
    expect(seen).toEqual(await one.read(stream, { from: 1 }));
  });
});
