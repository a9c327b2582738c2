/**
 * Redis-specific append guarantees beyond the contract: independent instances racing on
 * one stream, and a writer killed mid-load.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingRecord, cursorsOf } from '../../contracts/log-store-fixture.ts';
import { TEST_REDIS_URL } from '../../support/services.ts';
import { redisFixture, type RedisFixture } from './redis-fixture.ts';

const APPENDER = fileURLToPath(new URL('./fixtures/appender.ts', import.meta.url));

let fixture: RedisFixture;
beforeAll(async () => {
  fixture = await redisFixture();
});
afterAll(async () => {
  await fixture.cleanup();
});

describe('redis log store under concurrent and failing writers', () => {
  it('gives every cursor 1..N once when two instances append to one session at once', async () => {
    const [one, two] = [await fixture.open(), await fixture.open()];
    const stream = `s-${randomUUID()}`;
    const appendMany = (store: typeof one, tag: string) =>
      Promise.all(
        Array.from({ length: 150 }, (_, i) =>
          store.append({
            stream,
            records: Array.from({ length: 1 + (i % 4) }, (_, j) =>
              pendingRecord(`${tag}${i}.${j}`),
            ),
            key: null,
            fingerprint: '',
          }),
        ),
      );
    const results = (await Promise.all([appendMany(one, 'a'), appendMany(two, 'b')])).flat();
    const acknowledged = results.flatMap((result) => result.records);
    const total = 2 * Array.from({ length: 150 }, (_, i) => 1 + (i % 4)).reduce((a, b) => a + b);
    expect(acknowledged).toHaveLength(total);
    expect(cursorsOf(acknowledged).sort((a, b) => a - b)).toEqual(
      Array.from({ length: total }, (_, i) => i + 1),
    );
    // Each batch holds consecutive cursors: batches never interleave.
    for (const result of results) {
      const first = result.records[0]?.envelope.cursor ?? 0;
      expect(cursorsOf(result.records)).toEqual(result.records.map((_, i) => first + i));
    }
    const stored = await two.read(stream, { from: 1 });
    const byCursor = new Map(acknowledged.map((r) => [r.envelope.cursor, r]));
    expect(stored).toEqual(stored.map((r) => byCursor.get(r.envelope.cursor)));
    expect(await one.head(stream)).toEqual({ head: total, archived: false });
  });

  it('loses no acknowledged record and leaves no gap when the writer is SIGKILLed mid-load', async () => {
    const stream = `s-${randomUUID()}`;
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', APPENDER, TEST_REDIS_URL, fixture.prefix, stream],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const acknowledged = new Map<number, string>();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let pending = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => {
        resolve(signal);
      }),
    );
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`the appender acknowledged too little in time: ${stderr}`));
      }, 15_000);
      child.stdout.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          const space = line.indexOf(' ');
          acknowledged.set(Number(line.slice(0, space)), line.slice(space + 1));
        }
        if (acknowledged.size >= 500) {
          clearTimeout(timer);
          // Killed while appends are in flight: whatever it acknowledged must be there.
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    expect(await exited).toBe('SIGKILL');
    const store = await fixture.open();
    const head = (await store.head(stream))?.head ?? 0;
    const stored = await store.read(stream, { from: 1 });
    expect(cursorsOf(stored)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    expect(head).toBeGreaterThanOrEqual(Math.max(...acknowledged.keys()));
    for (const [cursor, body] of acknowledged) expect(stored[cursor - 1]?.body).toBe(body);
    // The store goes on from where the killed writer stopped.
    const next = await store.append({
      stream,
      records: [pendingRecord('after')],
      key: null,
      fingerprint: '',
    });
    expect(cursorsOf(next.records)).toEqual([head + 1]);
  });
});
