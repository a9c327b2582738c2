import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { pacer } from '../../../src/http/tails/pacer.ts';

/** A wire that records when it was corked and uncorked, and how deep the cork is. */
function recordingWire() {
  const events: { what: 'cork' | 'uncork'; at: number }[] = [];
  let depth = 0;
  return {
    events,
    get depth() {
      return depth;
    },
    cork() {
      depth += 1;
      events.push({ what: 'cork', at: performance.now() });
    },
    uncork() {
      depth -= 1;
      events.push({ what: 'uncork', at: performance.now() });
    },
  };
}

describe('pacer', () => {
  it('writes a quiet connection at the end of the tick, once for all writes of the tick', async () => {
    const wire = recordingWire();
    const hold = pacer(wire, 50);
    hold();
    hold();
    hold();
    expect(wire.depth).toBe(1);
    await new Promise((resolve) => {
      process.nextTick(resolve);
    });
    expect(wire.depth).toBe(0);
    expect(wire.events.map((event) => event.what)).toEqual(['cork', 'uncork']);
  });

  it('holds writes that come within the window of the last write until the window ends', async () => {
    const wire = recordingWire();
    const hold = pacer(wire, 50);
    hold();
    await sleep(5);
    const second = performance.now();
    hold();
    await sleep(10);
    hold(); // joins the held batch
    expect(wire.depth).toBe(1);
    await sleep(60);
    expect(wire.depth).toBe(0);
    const [, firstFlush, , secondFlush] = wire.events;
    expect(wire.events.map((event) => event.what)).toEqual(['cork', 'uncork', 'cork', 'uncork']);
    // Flushed no earlier than a window after the first flush, and not much later.
    expect((secondFlush?.at ?? 0) - (firstFlush?.at ?? 0)).toBeGreaterThanOrEqual(49);
    expect((secondFlush?.at ?? 0) - second).toBeLessThan(50 + 30);
  });

  it('writes at once again once the connection has been quiet for a window', async () => {
    const wire = recordingWire();
    const hold = pacer(wire, 20);
    hold();
    await sleep(40);
    hold();
    await new Promise((resolve) => {
      process.nextTick(resolve);
    });
    expect(wire.depth).toBe(0);
    expect(wire.events).toHaveLength(4);
  });

  it('does nothing without a wire', () => {
    expect(() => {
      pacer(undefined)();
    }).not.toThrow();
  });
});
