/**
 * Row 90's waiting messages, by cursor, appended without copying.
 *
 * A session whose turn runs long can gather thousands of messages; copying the list on
 * each one made every append cost the whole queue (a quarter of the append route's time
 * in `npm run bench` once turns existed). Successive snapshots therefore share one array
 * and each sees its first `size` cursors, as a slice of a growing buffer does: appending
 * to the newest view pushes in place (the views before it keep their size and never see
 * the new cursor), appending to an older view copies what it sees first. A view is plain
 * data, so it persists as JSON with the rest of the context.
 */
export interface MessageQueue {
  /** The shared buffer; only the first `size` entries belong to this view. */
  readonly cursors: readonly number[];
  readonly size: number;
}

/** No message waits. Never pushed into: the first append makes a buffer of its own. */
export const emptyQueue: MessageQueue = Object.freeze({ cursors: Object.freeze([]), size: 0 });

/** `queue` with `cursor` after its last message. */
export function enqueue(queue: MessageQueue, cursor: number): MessageQueue {
  const { cursors, size } = queue;
  if (size > 0 && cursors.length === size) {
    // The newest view of its buffer: no other view sees past `size`, so pushing is safe.
    (cursors as number[]).push(cursor);
    return { cursors, size: size + 1 };
  }
  const own = cursors.slice(0, size);
  own.push(cursor);
  return { cursors: own, size: size + 1 };
}

/** The cursors `queue` holds, oldest first, as an array of their own. */
export function queued(queue: MessageQueue): readonly number[] {
  return queue.cursors.slice(0, queue.size);
}
