/**
 * Two processes on one SQLite data folder (issue 13, item 5): a record another process
 * appends reaches a tail in this one within 50 ms. The other process is a real one, a
 * child `node` running the project's store on the same file (`fixtures/append-on-cue.ts`);
 * each record's time is taken from its append's acknowledgment there to its delivery here.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { openSqliteLogStore } from '../../../src/storage/sql/open.ts';
import { eventually, within } from '../../contracts/log-store-fixture.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/append-on-cue.ts', import.meta.url));
/** The bound, from the other process's acknowledgment to delivery here. */
const WITHIN_MS = 50;
const RECORDS = 5;

it('delivers to a tail here a record another process appends, within 50 ms', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'sql-two-processes-'));
  const file = path.join(folder, 'service.sqlite');
  const stream = `s-${randomUUID()}`;
  const store = await openSqliteLogStore({ file });
  const abort = new AbortController();
  const delivered = new Map<number, number>();
  const tail = (async () => {
    for await (const record of store.tail(stream, { from: 1, signal: abort.signal })) {
      delivered.set(record.envelope.cursor, Date.now());
    }
  })();
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', FIXTURE, JSON.stringify({ file, stream })],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const line = async (): Promise<string> => {
    const next = await within(10_000, lines.next(), `a line from the other process (${errors})`);
    if (next.done === true) throw new Error(`the other process ended: ${errors}`);
    return next.value;
  };
  try {
    expect(await line()).toBe('ready');
    const latencies: number[] = [];
    for (let n = 1; n <= RECORDS; n++) {
      child.stdin.write(`${n}\n`);
      const [cursor, acknowledged] = (await line()).split(' ').map(Number);
      expect(cursor).toBe(n);
      // Generous here so a miss reports its latency instead of timing out.
      await eventually(5000, () => delivered.has(n), `record ${n} in this process`);
      latencies.push(Math.max(0, (delivered.get(n) ?? Infinity) - (acknowledged ?? 0)));
    }
    expect(Math.max(...latencies), `latencies ${latencies.join(', ')} ms`).toBeLessThan(WITHIN_MS);
    expect([...delivered.keys()]).toEqual([1, 2, 3, 4, 5]);
  } finally {
    child.stdin.end();
    await within(10_000, new Promise((resolve) => child.once('exit', resolve)), 'the exit');
    abort.abort();
    await tail;
    await store.close();
    await rm(folder, { recursive: true, force: true });
  }
});
