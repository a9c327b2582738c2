/**
 * The turn runtime's due marks (`src/turns/due-marks.ts`) on a real SQLite work store: a
 * mark with none under way is written at once, the marks asked for while it is written go
 * together in the next statement, each caller answered only once its mark is in the
 * store; a statement that fails fails its own callers only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteWorkStore } from '../../../src/storage/sql/open.ts';
import type { WorkStore } from '../../../src/storage/work-store.ts';
import { DueMarks } from '../../../src/turns/due-marks.ts';

let folder: string;
let work: WorkStore;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'due-marks-'));
  work = await openSqliteWorkStore({ file: path.join(folder, 'service.sqlite') });
});
afterAll(async () => {
  await work.close();
  await rm(folder, { recursive: true, force: true });
});

type Marks = Parameters<WorkStore['markDueMany']>[0];

/** The real store, with each `markDueMany` statement recorded (and failed on demand). */
function recorded(): { store: WorkStore; groups: string[][]; failNext: () => void } {
  const groups: string[][] = [];
  let fail = false;
  const store = Object.create(work) as WorkStore;
  store.markDueMany = (marks: Marks) => {
    groups.push(marks.map((mark) => mark.session));
    if (fail) {
      fail = false;
      return Promise.reject(new Error('the statement failed'));
    }
    return work.markDueMany(marks);
  };
  return { store, groups, failNext: () => (fail = true) };
}

let next = 0;
const sessions = (count: number) => Array.from({ length: count }, () => `due-marks-${next++}`);

describe('DueMarks', () => {
  it('writes a mark alone at once, and the marks asked for meanwhile together after it', async () => {
    const { store, groups } = recorded();
    const marks = new DueMarks(store);
    const [first, ...rest] = sessions(30) as [string, ...string[]];
    await Promise.all([first, ...rest].map((session, i) => marks.mark(session, 1_000 + i)));
    expect(groups).toEqual([[first], rest]);
    for (const [i, session] of [first, ...rest].entries()) {
      expect((await work.dueEntry(session))?.at).toBe(1_000 + i);
    }
  });

  it('fails only the callers of a statement that failed', async () => {
    const { store, failNext } = recorded();
    const marks = new DueMarks(store);
    const [lost, kept] = sessions(2) as [string, string];
    failNext();
    await expect(marks.mark(lost, 5)).rejects.toThrow('the statement failed');
    await marks.mark(kept, 6);
    expect(await work.dueEntry(lost)).toBeNull();
    expect((await work.dueEntry(kept))?.at).toBe(6);
  });
});
