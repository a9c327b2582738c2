/**
 * Row 90's queue shares one buffer between successive views (`turn.queue.ts`). Whatever
 * views are appended to, in whatever order, each must hold exactly what a plain copied
 * list would: an append never shows in a view taken before it, and appending to an older
 * view leaves the newer ones as they were.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyQueue, enqueue, queued, type MessageQueue } from '../../src/machines/turn.queue.ts';

describe('the turn machine message queue', () => {
  it('gives every view the list a copy-on-append queue would, across any branching', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 30 }), { maxLength: 80 }), (picks) => {
        const views: MessageQueue[] = [emptyQueue];
        const lists: number[][] = [[]];
        picks.forEach((pick, cursor) => {
          // Mostly the newest view (as a live actor does), sometimes an older one.
          const from = pick % 3 === 0 ? pick % views.length : views.length - 1;
          views.push(enqueue(views[from] ?? emptyQueue, cursor));
          lists.push([...(lists[from] ?? []), cursor]);
        });
        views.forEach((view, i) => {
          expect(queued(view)).toEqual(lists[i]);
          expect(view.size).toBe(lists[i]?.length);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('appends to the newest view without copying, and survives JSON as the context does', () => {
    const one = enqueue(emptyQueue, 1);
    const two = enqueue(one, 2);
    expect(two.cursors).toBe(one.cursors);
    expect(queued(one)).toEqual([1]);
    const restored = JSON.parse(JSON.stringify(two)) as MessageQueue;
    expect(queued(enqueue(restored, 3))).toEqual([1, 2, 3]);
    expect(queued(emptyQueue)).toEqual([]);
  });
});
