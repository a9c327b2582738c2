/**
 * Two processes on one store: records another process appends
 * reach a tail in this one, on SQLite within 50 ms. The other process is a real one, a
 * child `node` running the project's store on the same file or schema
 * (`fixtures/append-on-cue.ts`); each record's time is taken from its append's
 * acknowledgment there to its delivery here.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { LogStore } from '../../../src/storage/log-store.ts';
import { openPostgresLogStore, openSqliteLogStore } from '../../../src/storage/sql/open.ts';
import { eventually, range, within } from '../../contracts/log-store-fixture.ts';
import { createTestSchema } from './pg-schema.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/append-on-cue.ts', import.meta.url));
/** The bound a tail is held to, from the other process's acknowledgment to delivery here. */
const WITHIN_MS = 50;
const RECORDS = 5;

/**
 * Has a child process append RECORDS records to `stream` of the store `target` names, one
 * at a time, while `store` tails it here; answers each record's cursor and latency.
 */
async function fromAnotherProcess(
  store: LogStore,
  target: Record<string, string>,
): Promise<{ cursors: number[]; latencies: number[] }> {
  const stream = target.stream ?? '';
  const abort = new AbortController();
  const delivered = new Map<number, number>();
  const tail = (async () => {
    for await (const record of store.tail(stream, { from: 1, signal: abort.signal })) {
      delivered.set(record.envelope.cursor, Date.now());
    }
  })();
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', FIXTURE, JSON.stringify(target)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
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
    return { cursors: [...delivered.keys()], latencies };
  } finally {
    child.stdin.end();
    await within(10_000, exited, 'the exit of the other process');
    abort.abort();
    await tail;
  }
}

it('delivers to a tail here a record another process appends to the SQLite file, within 50 ms', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'sql-two-processes-'));
  const file = path.join(folder, 'service.sqlite');
  const store = await openSqliteLogStore({ file });
  try {
    const target = { engine: 'sqlite', file, stream: `s-${randomUUID()}` };
    const { cursors, latencies } = await fromAnotherProcess(store, target);
    expect(cursors).toEqual(range(1, RECORDS));
    expect(Math.max(...latencies), `latencies ${latencies.join(', ')} ms`).toBeLessThan(WITHIN_MS);
  } finally {
    await store.close();
    await rm(folder, { recursive: true, force: true });
  }
});

it('delivers to a tail here the records another process appends on PostgreSQL', async () => {
  const { url, schema, drop } = await createTestSchema();
  const store = await openPostgresLogStore({ url, schema });
  try {
    const target = { engine: 'postgres', url, schema, stream: `s-${randomUUID()}` };
    const { cursors } = await fromAnotherProcess(store, target);
    expect(cursors).toEqual(range(1, RECORDS));
  } finally {
    await store.close();
    await drop();
  }
});
