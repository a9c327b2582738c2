/**
 * The turn runtime's due marks (`src/turns/due-marks.ts`) on a real SQLite work store: the
 * marks asked for in one turn of the event loop go in one statement, those asked for while
 * it is written go together in the next, each caller answered only once its mark is in the
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

/**
 * The real store, with each `markDueMany` statement recorded, failed on demand, and held
 * before it is written until `gate` (when set) resolves.
 */
function recorded(): {
  store: WorkStore;
  groups: string[][];
  failNext: () => void;
  hold: (gate: Promise<void>) => void;
} {
  const groups: string[][] = [];
  let fail = false;
  let held: Promise<void> | undefined;
  const store = Object.create(work) as WorkStore;
  store.markDueMany = async (marks: Marks) => {
    groups.push(marks.map((mark) => mark.session));
    const gate = held;
    held = undefined;
    if (gate !== undefined) await gate;
    if (fail) {
      fail = false;
      throw new Error('the statement failed');
    }
    await work.markDueMany(marks);
  };
  const hold = (gate: Promise<void>): void => {
    held = gate;
  };
  return { store, groups, failNext: () => (fail = true), hold };
}

let next = 0;
const sessions = (count: number) => Array.from({ length: count }, () => `due-marks-${next++}`);

describe('DueMarks', () => {
  it('writes the marks of one turn together, and those asked for meanwhile in the next statement', async () => {
    const { store, groups, hold } = recorded();
    const marks = new DueMarks(store);
    let open = (): void => undefined;
    hold(new Promise((resolve) => (open = resolve)));
    const turn = sessions(30);
    const answered: string[] = [];
    const first = turn.map((session, i) =>
      marks.mark(session, 1_000 + i).then(() => answered.push(session)),
    );
    // Nothing is written before the turn's end.
    expect(groups).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(groups).toEqual([turn]);
    // Asked for in later turns while the first statement is held: they wait, together.
    const later = sessions(5);
    const second = later.map((session, i) => marks.mark(session, 2_000 + i));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(groups).toEqual([turn]);
    expect(answered).toEqual([]);
    open();
    await Promise.all([...first, ...second]);
    expect(groups).toEqual([turn, later]);
    for (const [i, session] of turn.entries()) {
      expect((await work.dueEntry(session))?.at).toBe(1_000 + i);
    }
    for (const [i, session] of later.entries()) {
      expect((await work.dueEntry(session))?.at).toBe(2_000 + i);
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
