/**
 * The Redis readers' fan-out (`src/storage/redis/fan-out.ts`): what this instance landed
 * is handed on at once only where it continues what was handed on, and a read that brings
 * records back hands on only those past the position, so every record reaches a
 * subscription once, in cursor order, whichever way it came first.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../../src/storage/redis/entries.ts';
import { fanOut, fanOutLanded, type FannedStream } from '../../../src/storage/redis/fan-out.ts';
import { Subscription } from '../../../src/storage/subscription.ts';

const STREAM = 's';

function entry(cursor: number): LogEntry {
  const body = `{"n":${cursor}}`;
  return {
    record: {
      envelope: {
        at: cursor,
        cursor,
        idem: null,
        kind: { name: 'note', version: 1 },
        producer: 'p',
        size: body.length,
        stream: STREAM,
        to: null,
      },
      body,
    },
    final: false,
  };
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => entry(from + i));

function watched(pos = 0): { watch: FannedStream; subscription: Subscription } {
  const subscription = new Subscription(STREAM, pos, 10_000);
  return { watch: { pos, subs: new Set([subscription]) }, subscription };
}

const taken = (subscription: Subscription) =>
  subscription.take().map((fed) => fed.record.envelope.cursor);

describe('the Redis fan-out', () => {
  it('hands on what this instance landed when it continues what was handed on', () => {
    const { watch, subscription } = watched(2);
    fanOutLanded(watch, range(3, 4));
    expect(taken(subscription)).toEqual([3, 4]);
    expect(watch.pos).toBe(4);
  });

  it('leaves to the read what lands past a record not read yet, and the read keeps the order', () => {
    const { watch, subscription } = watched(2);
    // Cursor 3 is another process's, not read yet: 4 must not overtake it.
    fanOutLanded(watch, range(4, 4));
    expect(taken(subscription)).toEqual([]);
    fanOut(watch, range(3, 4));
    expect(taken(subscription)).toEqual([3, 4]);
  });

  it('hands on once what the read brings back after the append handed it on', () => {
    const { watch, subscription } = watched();
    fanOutLanded(watch, range(1, 2));
    fanOut(watch, range(1, 3));
    expect(taken(subscription)).toEqual([1, 2, 3]);
    expect(watch.pos).toBe(3);
  });

  it('delivers every record once, in order, however appends and reads interleave', () => {
    // Each step lands the next few cursors, by this instance or by another; a read step
    // brings back everything landed so far past where the last read stopped.
    const step = fc.oneof(
      fc.record({ kind: fc.constant('ours' as const), count: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('theirs' as const), count: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('read' as const), count: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const { watch, subscription } = watched();
        let landed = 0;
        let read = 0;
        const delivered: number[] = [];
        for (const { kind, count } of steps) {
          if (kind === 'read') {
            fanOut(watch, range(read + 1, landed));
            read = landed;
          } else {
            const batch = range(landed + 1, landed + count);
            landed += count;
            if (kind === 'ours') fanOutLanded(watch, batch);
          }
          delivered.push(...taken(subscription));
        }
        fanOut(watch, range(read + 1, landed));
        delivered.push(...taken(subscription));
        expect(delivered).toEqual(Array.from({ length: landed }, (_, i) => i + 1));
      }),
    );
  });
});
