/**
 * Tails on a Redis Cluster following their sessions: records one
 * process appends reach a tail in another, and a slot moving to another master while a
 * tail runs and appends go on loses and repeats nothing.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogStore, StoredRecord } from '../../../src/storage/log-store.ts';
import { keySlot, sessionKeys } from '../../../src/storage/redis/keys.ts';
import {
  cursorsOf,
  eventually,
  follow,
  pendingRecord,
  range,
} from '../../contracts/log-store-fixture.ts';
import { clusterFixture, type ClusterFixture } from './cluster-fixture.ts';
import { moveSlot } from './cluster-slots.ts';

const APPENDER = fileURLToPath(new URL('./fixtures/appender.ts', import.meta.url));

let fixture: ClusterFixture;
beforeAll(async () => {
  fixture = await clusterFixture();
});
afterAll(async () => {
  await fixture.cleanup();
});

/**
 * Appends batches of 1 to 3 records under idempotency keys until stopped. `landed` counts
 * the records acknowledged so far and throws what stopped the appends, if anything did.
 */
function appendUntilStopped(store: LogStore, stream: string) {
  const acknowledged: StoredRecord[] = [];
  const stopped = new AbortController();
  let failure: Error | undefined;
  const done = (async () => {
    for (let i = 0; !stopped.signal.aborted; i++) {
      const records = Array.from({ length: 1 + (i % 3) }, (_, j) => pendingRecord(`${i}.${j}`));
      // Keyed batches keep all three keys in place: the script then runs on whichever
      // master holds them while the slot migrates, instead of waiting for it to end.
      const result = await store.append({ stream, records, key: `b${i}`, fingerprint: `f${i}` });
      acknowledged.push(...result.records);
      await sleep(3);
    }
  })().catch((error: unknown) => {
    failure = error instanceof Error ? error : new Error(String(error));
  });
  const landed = () => {
    if (failure !== undefined) throw failure;
    return acknowledged.length;
  };
  const stop = async () => {
    stopped.abort();
    await done;
  };
  return { acknowledged, landed, stop };
}

/** CLIENT LIST on `node`: the `ssub` count of the client named `name`, if any. */
async function shardSubscriptions(node: Redis, name: string): Promise<number | undefined> {
  const list = await node.client('LIST');
  if (typeof list !== 'string') throw new Error('CLIENT LIST answered no text');
  const line = list.split('\n').find((client) => client.includes(` name=${name} `));
  const count = line === undefined ? undefined : /\bssub=(\d+)/.exec(line)?.[1];
  return count === undefined ? undefined : Number(count);
}

describe('redis cluster tails following their sessions', () => {
  it('tails through one process what another process appends', async () => {
    const reader = await fixture.open();
    const stream = `s-${randomUUID()}`;
    const tail = follow(reader, stream);
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', APPENDER, fixture.url, fixture.prefix, stream],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => {
      child.on('exit', () => {
        resolve();
      });
    });
    const acknowledged = new Map<number, string>();
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const space = line.indexOf(' ');
        acknowledged.set(Number(line.slice(0, space)), line.slice(space + 1));
      }
    });
    try {
      await eventually(15_000, () => acknowledged.size >= 300, `the appender (${stderr})`);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const head = (await reader.head(stream))?.head ?? 0;
    await eventually(5000, () => tail.seen.length >= head, 'the tail');
    await tail.stop();
    expect(cursorsOf(tail.seen)).toEqual(range(1, head));
    for (const [cursor, body] of acknowledged) expect(tail.seen[cursor - 1]?.body).toBe(body);
  });

  it('loses and repeats nothing when the slot of a tailed session moves to another master', async () => {
    const name = `reshard-${randomBytes(4).toString('hex')}`;
    const reader = await fixture.open({ name });
    const writer = await fixture.open();
    const stream = `s-${randomUUID()}`;
    const slot = keySlot(sessionKeys(fixture.prefix, stream).log);
    const early = follow(reader, stream);
    const appends = appendUntilStopped(writer, stream);
    let late: ReturnType<typeof follow> | undefined;
    let landedMeanwhile = 0;
    try {
      await eventually(5000, () => appends.landed() >= 30, 'appends before the move');
      const { target } = await moveSlot(fixture.admin, slot, async () => {
        // The keys sit on the importing master; appends land there through ASK redirects.
        const before = appends.landed();
        late = follow(reader, stream);
        await eventually(5000, () => appends.landed() >= before + 10, 'appends mid-move');
        landedMeanwhile = appends.landed() - before;
      });
      const after = appends.landed();
      await eventually(5000, () => appends.landed() >= after + 30, 'appends after the move');
      // The reader followed the session to its new master, not only its backstop reads.
      const subscribed = async () => (await shardSubscriptions(target, `${name}:reader`)) === 1;
      const deadline = Date.now() + 3000;
      while (!(await subscribed()) && Date.now() < deadline) await sleep(20);
      expect(await subscribed()).toBe(true);
      // The new master serves the slot: it would answer MOVED otherwise.
      expect(await target.exists(sessionKeys(fixture.prefix, stream).log)).toBe(1);
    } finally {
      await appends.stop();
    }
    appends.landed();
    const final = await writer.archive(stream, pendingRecord('end'));
    const head = final.envelope.cursor;
    const [earlySeen, lateSeen] = await Promise.all([early.ended, late?.ended]);
    expect(landedMeanwhile).toBeGreaterThanOrEqual(10);
    const bodies = [...appends.acknowledged, final].map((r) => r.body);
    for (const seen of [earlySeen, lateSeen]) {
      expect(cursorsOf(seen ?? [])).toEqual(range(1, head));
      expect((seen ?? []).map((r) => r.body)).toEqual(bodies);
    }
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
