/**
 * Where the log store puts a session on a Redis Cluster and how it follows it:
 * every key of a session and its wake channel in one slot on the master that
 * owns it, slots computed as the cluster computes them, and one subscriber connection
 * per master for all of an instance's tails.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unavailable } from '../../../src/errors.ts';
import type { LogStore } from '../../../src/storage/log-store.ts';
import { keySlot, sessionKeys } from '../../../src/storage/redis/keys.ts';
import { openRedisLogStore } from '../../../src/storage/redis/store.ts';
import { collect, pendingRecord, within } from '../../contracts/log-store-fixture.ts';
import { clusterFixture, type ClusterFixture } from './cluster-fixture.ts';
import { owner as ownerOf } from './cluster-slots.ts';

let fixture: ClusterFixture;
beforeAll(async () => {
  fixture = await clusterFixture();
});
afterAll(async () => {
  await fixture.cleanup();
});

const append = (store: LogStore, stream: string, text: string) =>
  store.append({ stream, records: [pendingRecord(text)], key: null, fingerprint: '' });

const owner = (slot: number) => ownerOf(fixture.admin, slot);

/** The clients CLIENT LIST shows on `node` under a connection name, as field maps. */
async function clientsNamed(node: Redis, name: string): Promise<Map<string, string>[]> {
  const list = await node.client('LIST');
  if (typeof list !== 'string') throw new Error('CLIENT LIST answered no text');
  return list
    .split('\n')
    .map((line) => new Map(line.split(' ').map((pair) => pair.split('=', 2) as [string, string])))
    .filter((client) => client.get('name') === name);
}

describe('redis cluster log store layout', () => {
  it("keeps a session's keys and wake channel in one slot, on the master owning it", async () => {
    const store = await fixture.open();
    const stream = `s-${randomUUID()}`;
    await store.append({ stream, records: [pendingRecord('a')], key: 'k', fingerprint: 'f' });
    await store.archive(stream, pendingRecord('end'));
    const keys = sessionKeys(fixture.prefix, stream);
    const found = (await fixture.keys()).filter((key) => key.includes(stream)).sort();
    expect(found).toEqual([keys.keys, keys.log, keys.meta]);
    const slot = keySlot(keys.log);
    for (const name of [keys.log, keys.meta, keys.keys, keys.wake]) {
      expect(await fixture.admin.cluster('KEYSLOT', name)).toBe(slot);
    }
    expect(await owner(slot).exists(keys.log, keys.meta, keys.keys)).toBe(3);
  });

  it('computes the slot of any key as the cluster does, hash tags included', async () => {
    const node = fixture.admin.nodes('master')[0];
    if (node === undefined) throw new Error('the cluster has no master');
    const key = fc.stringMatching(/^[a-z{}é]{0,12}$/);
    await fc.assert(
      fc.asyncProperty(key, async (name) => {
        expect(keySlot(name)).toBe(await node.cluster('KEYSLOT', name));
      }),
      { numRuns: 200 },
    );
  });

  it('follows streams on every master with one subscriber connection per master', async () => {
    const name = `follow-${randomBytes(4).toString('hex')}`;
    const store = await fixture.open({ name });
    const writer = await fixture.open();
    const streams = Array.from({ length: 30 }, () => `s-${randomUUID()}`);
    const tails = streams.map((stream) => collect(store.tail(stream, { from: 1, to: 2 })));
    const masters = fixture.admin.nodes('master');
    const expected = masters.map((node) => streams.filter((s) => owner(keySlot(s)) === node));
    // Each master's reader has taken every subscription of the streams that master owns.
    const deadline = Date.now() + 5000;
    let readers: Map<string, string>[][];
    for (;;) {
      readers = await Promise.all(masters.map((node) => clientsNamed(node, `${name}:reader`)));
      const settled = readers.every(
        (found, i) => found[0]?.get('ssub') === String(expected[i]?.length),
      );
      if (settled || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(expected.every((owned) => owned.length > 0)).toBe(true);
    expect(readers.map((found) => found.length)).toEqual(masters.map(() => 1));
    expect(readers.map((found) => found[0]?.get('ssub'))).toEqual(
      expected.map((owned) => String(owned.length)),
    );
    await Promise.all(streams.map((stream) => append(writer, stream, stream)));
    const seen = await within(5000, Promise.all(tails), 'the 30 tails');
    expect(seen.map((records) => records.map((r) => r.body))).toEqual(
      streams.map((stream) => [JSON.stringify({ text: stream })]),
    );
  });

  it("keeps a tail going when its master's subscriber connection is killed", async () => {
    const name = `killed-${randomBytes(4).toString('hex')}`;
    const store = await fixture.open({ name });
    const writer = await fixture.open();
    const stream = `s-${randomUUID()}`;
    const tail = collect(store.tail(stream, { from: 1, to: 3 }));
    await append(writer, stream, 'before');
    const node = owner(keySlot(sessionKeys(fixture.prefix, stream).wake));
    const deadline = Date.now() + 5000;
    let [reader] = await clientsNamed(node, `${name}:reader`);
    while (reader?.get('ssub') !== '1' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      [reader] = await clientsNamed(node, `${name}:reader`);
    }
    expect(reader?.get('ssub')).toBe('1');
    await node.client('KILL', 'ID', reader?.get('id') ?? '');
    await append(writer, stream, 'after');
    // Well within the reader's 5 s backstop: it subscribed anew and read at once.
    const seen = await within(3000, tail, 'the tail after the kill');
    expect(seen.map((r) => r.body)).toEqual(
      ['before', 'after'].map((text) => JSON.stringify({ text })),
    );
  });

  it('refuses to open when no seed of the cluster answers', async () => {
    const opening = openRedisLogStore({ url: 'redis+cluster://127.0.0.1:1,127.0.0.1:2' });
    await expect(opening).rejects.toBeInstanceOf(Unavailable);
  });
});
