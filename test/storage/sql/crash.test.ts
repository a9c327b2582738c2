/**
 * Durability under a crash, on both engines: a child process appends in a loop and
 * prints every acknowledged cursor; it is SIGKILLed mid-load; the store, reopened, must
 * hold every acknowledged record and cursors 1..head with no gap.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogStore } from '../../../src/storage/log-store.ts';
import { openPostgresLogStore, openSqliteLogStore } from '../../../src/storage/sql/open.ts';
import { createTestSchema, type TestSchema } from './pg-schema.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/append-loop.ts', import.meta.url));
/** Acknowledged records to wait for before the kill: mid-load, not at the start. */
const BEFORE_KILL = 150;

interface Acknowledged {
  readonly cursor: number;
  readonly body: string;
}

/** Runs the writer until it acknowledged `BEFORE_KILL` records, then SIGKILLs it. */
async function appendUntilKilled(target: Record<string, string>): Promise<Acknowledged[]> {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', FIXTURE, JSON.stringify(target)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const acknowledged: Acknowledged[] = [];
  let pending = '';
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => {
    child.on('exit', (_, signal) => {
      resolve(signal);
    });
  });
  const killed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the writer acknowledged only ${acknowledged.length} records: ${errors}`));
    }, 15_000);
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const match = /^(\d+) (.*)$/.exec(line);
        if (match?.[1] !== undefined && match[2] !== undefined) {
          acknowledged.push({ cursor: Number(match[1]), body: match[2] });
        }
      }
      if (acknowledged.length >= BEFORE_KILL && child.exitCode === null && !child.killed) {
        clearTimeout(timer);
        child.kill('SIGKILL');
        resolve();
      }
    });
  });
  await killed;
  expect(await exited).toBe('SIGKILL');
  return acknowledged;
}

async function expectSurvived(
  store: LogStore,
  stream: string,
  acknowledged: readonly Acknowledged[],
) {
  const head = await store.head(stream);
  const records = await store.read(stream, { from: 1 });
  expect(head?.head).toBe(records.length);
  expect(records.map((r) => r.envelope.cursor)).toEqual(records.map((_, i) => i + 1));
  for (const { cursor, body } of acknowledged) expect(records[cursor - 1]?.body).toBe(body);
  expect(records.length).toBeGreaterThanOrEqual(acknowledged.length);
  // The stream goes on where it stopped.
  const next = await store.append({
    stream,
    key: null,
    fingerprint: '',
    records: [
      {
        kind: { name: 'message.submitted', version: 1 },
        producer: 'p',
        to: null,
        idem: null,
        body: '{}',
      },
    ],
  });
  expect(next.records[0]?.envelope.cursor).toBe(records.length + 1);
}

describe('a writer killed mid-load', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('loses no acknowledged record and leaves no gap on SQLite', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'sql-crash-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const file = path.join(folder, 'service.sqlite');
    const stream = `s-${randomUUID()}`;
    const acknowledged = await appendUntilKilled({ engine: 'sqlite', file, stream });
    const store = await openSqliteLogStore({ file });
    cleanups.unshift(() => store.close());
    await expectSurvived(store, stream, acknowledged);
  });

  it('loses no acknowledged record and leaves no gap on PostgreSQL', async () => {
    const schema: TestSchema = await createTestSchema();
    cleanups.push(() => schema.drop());
    const stream = `s-${randomUUID()}`;
    const acknowledged = await appendUntilKilled({
      engine: 'postgres',
      url: schema.url,
      schema: schema.schema,
      stream,
    });
    const store = await openPostgresLogStore({ url: schema.url, schema: schema.schema });
    cleanups.unshift(() => store.close());
    await expectSurvived(store, stream, acknowledged);
  });
});
