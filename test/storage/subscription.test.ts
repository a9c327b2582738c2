import { describe, expect, it } from 'vitest';
import type { StoredRecord } from '../../src/storage/log-store.ts';
import {
  offerTo,
  Subscription,
  type FedRecord,
  type Listener,
} from '../../src/storage/subscription.ts';

const fed = (cursor: number, final = false, size = 2): FedRecord => ({
  record: {
    envelope: {
      at: 1,
      cursor,
      idem: null,
      kind: { name: 'message.submitted', version: 1 },
      producer: 'principal:p',
      size,
      stream: 's',
      to: null,
    },
    body: '{}',
  } satisfies StoredRecord,
  final,
});
/** Resolves once `subscription` wakes a tail parked on it, or at once when none need wait. */
const waitOn = (subscription: Subscription, listener?: Listener) =>
  new Promise<void>((resolve) => {
    if (!subscription.park({ woken: resolve }, listener)) resolve();
  });
const cursors = (entries: readonly FedRecord[]) => entries.map((e) => e.record.envelope.cursor);

describe('Subscription', () => {
  it('buffers what is pushed and wakes a waiting tail', async () => {
    const subscription = new Subscription('s', 0, 10);
    const woken = waitOn(subscription);
    expect(subscription.push([fed(1), fed(2)])).toBe(true);
    await woken;
    expect(cursors(subscription.take())).toEqual([1, 2]);
    expect(subscription.take()).toEqual([]);
  });

  it('hands records to the listener of a waiting tail, the rest in order to the buffer', async () => {
    const subscription = new Subscription('s', 0, 10);
    const heard: number[] = [];
    const woken = waitOn(subscription, {
      offered: (entry: FedRecord) => {
        const cursor = entry.record.envelope.cursor;
        if (cursor === 3) return false;
        heard.push(cursor);
        return true;
      },
    });
    expect(subscription.push([fed(1), fed(2)])).toBe(true);
    expect(subscription.take()).toEqual([]);
    expect(subscription.push([fed(3), fed(4)])).toBe(true);
    expect(heard).toEqual([1, 2]);
    // 3 was refused: it and every later record wait in the buffer, even ones the
    // listener would take, so the tail reads them in order; the refusal woke the tail.
    await woken;
    expect(subscription.push([fed(5)])).toBe(true);
    expect(heard).toEqual([1, 2]);
    expect(cursors(subscription.take())).toEqual([3, 4, 5]);
    // Once woken, the tail no longer listens.
    subscription.push([fed(6)]);
    expect(heard).toEqual([1, 2]);
    expect(cursors(subscription.take())).toEqual([6]);
  });

  it('leaves a record to the buffer, and stops listening, when its listener throws', async () => {
    const subscription = new Subscription('s', 0, 10);
    const woken = waitOn(subscription, {
      offered: () => {
        throw new Error('a transport failed');
      },
    });
    expect(subscription.push([fed(1), fed(2)])).toBe(true);
    await woken;
    expect(cursors(subscription.take())).toEqual([1, 2]);
    expect(subscription.push([fed(3)])).toBe(true);
    expect(cursors(subscription.take())).toEqual([3]);
  });

  it('hands over only the next record in order, and leaves the final one and the one before `to`', () => {
    let next = 1;
    const taken: number[] = [];
    const tail = {
      expected: () => next,
      stop: 4,
      over: () => false,
      passed: (cursor: number) => (next = cursor + 1),
    };
    const offer = (entry: FedRecord) =>
      offerTo(
        (record) => {
          taken.push(record.envelope.cursor);
          return true;
        },
        tail,
        entry,
      );
    expect(offer(fed(2))).toBe(false); // out of order
    expect(offer(fed(1))).toBe(true);
    expect(offer(fed(2, true))).toBe(false); // archiving record
    expect(offer(fed(2))).toBe(true);
    expect(offer(fed(3))).toBe(false); // the last one before `to` ends the tail
    expect(taken).toEqual([1, 2]);
    expect(next).toBe(3);
  });

  it('wakes a parked tail once, by a call, and lets it listen meanwhile', () => {
    const subscription = new Subscription('s', 0, 10);
    let wakes = 0;
    const heard: number[] = [];
    const waker = { woken: () => (wakes += 1) };
    const listener = {
      offered: (entry: FedRecord) => {
        heard.push(entry.record.envelope.cursor);
        return entry.record.envelope.cursor < 2;
      },
    };
    expect(subscription.park(waker, listener)).toBe(true);
    subscription.push([fed(1)]);
    expect([wakes, heard]).toEqual([0, [1]]);
    subscription.push([fed(2), fed(3)]);
    expect([wakes, heard]).toEqual([1, [1, 2]]);
    subscription.push([fed(4)]);
    expect(wakes).toBe(1);
    // Records wait in the buffer: nothing to park for.
    expect(subscription.park(waker, listener)).toBe(false);
    expect(cursors(subscription.take())).toEqual([2, 3, 4]);
    expect(subscription.park(waker)).toBe(true);
    subscription.unpark(waker);
    subscription.end();
    expect(wakes).toBe(1);
    expect(subscription.park(waker)).toBe(false);
  });

  it('is dropped, empty, when a push does not fit', async () => {
    const subscription = new Subscription('s', 0, 2);
    expect(subscription.push([fed(1)])).toBe(true);
    expect(subscription.push([fed(2), fed(3)])).toBe(false);
    expect(subscription.dropped).toBe(true);
    expect(subscription.take()).toEqual([]);
    expect(subscription.push([fed(4)])).toBe(false);
    await waitOn(subscription);
  });

  it('is dropped when the bodies it buffers would pass its bytes', () => {
    const subscription = new Subscription('s', 0, 1024, 1000);
    expect(subscription.push([fed(1, false, 400), fed(2, false, 400)])).toBe(true);
    expect(cursors(subscription.take())).toEqual([1, 2]);
    // Taken records no longer count.
    expect(subscription.push([fed(3, false, 600)])).toBe(true);
    expect(subscription.push([fed(4, false, 401)])).toBe(false);
    expect(subscription.dropped).toBe(true);
    expect(subscription.take()).toEqual([]);
  });
});
