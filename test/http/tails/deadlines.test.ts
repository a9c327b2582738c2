import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import { Deadlines, type Due } from '../../../src/http/tails/deadlines.ts';

interface Entry extends Due {
  readonly name: string;
}

const entry = (name: string, at: number): Entry => ({ name, at, slot: -1 });

describe('Deadlines', () => {
  // The clock and the timers move together, by hand.
  let clock: ManualClock;
  let fired: string[];
  let deadlines: Deadlines<Entry>;
  const advance = (ms: number) => {
    clock.advance(ms);
    vi.advanceTimersByTime(ms);
  };
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    clock = new ManualClock(1_000);
    fired = [];
    deadlines = new Deadlines(clock, (due) => fired.push(due.name));
  });
  afterEach(() => {
    deadlines.close();
    vi.useRealTimers();
  });

  it('fires each entry once its time comes, in the order of their times', () => {
    deadlines.add(entry('c', 1_300));
    deadlines.add(entry('a', 1_100));
    deadlines.add(entry('b', 1_200));
    advance(99);
    expect(fired).toEqual([]);
    advance(1);
    expect(fired).toEqual(['a']);
    advance(250);
    expect(fired).toEqual(['a', 'b', 'c']);
    expect(deadlines.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never fires a removed entry, and arms for the next one when the earliest goes', () => {
    const a = entry('a', 1_100);
    const b = entry('b', 1_200);
    deadlines.add(a);
    deadlines.add(b);
    expect(deadlines.remove(a)).toBe(true);
    expect(deadlines.remove(a)).toBe(false);
    advance(150);
    expect(fired).toEqual([]);
    advance(50);
    expect(fired).toEqual(['b']);
    expect(deadlines.remove(b)).toBe(false);
  });

  it('fires an entry whose time has passed at once', () => {
    deadlines.add(entry('late', 900));
    advance(0);
    expect(fired).toEqual(['late']);
  });

  it('fires what a clock set ahead passed at the next firing', () => {
    deadlines.add(entry('a', 61_000));
    deadlines.add(entry('b', 3_600_000));
    clock.set(61_000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(60_000);
    expect(fired).toEqual(['a']);
  });

  it('keeps many entries in order however they are added and removed', () => {
    // A fixed pseudo-random sequence: the same entries on every run.
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const all = Array.from({ length: 500 }, (_, i) => entry(String(i), 1_001 + random() * 10_000));
    for (const due of all) deadlines.add(due);
    for (const due of all.filter((_, i) => i % 3 === 0)) expect(deadlines.remove(due)).toBe(true);
    const kept = all.filter((_, i) => i % 3 !== 0);
    expect(deadlines.size).toBe(kept.length);
    advance(5_000);
    advance(6_000);
    const expected = [...kept].sort((x, y) => x.at - y.at).map((due) => due.name);
    expect(fired).toEqual(expected);
  });

  it('lets go of every entry on close', () => {
    const a = entry('a', 1_100);
    deadlines.add(a);
    deadlines.close();
    advance(1_000);
    expect(fired).toEqual([]);
    expect(a.slot).toBe(-1);
  });
});
