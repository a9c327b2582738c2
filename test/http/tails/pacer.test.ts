import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pacer } from '../../../src/http/tails/pacer.ts';

/** A wire that records its corks and uncorks, at the test's clock. */
function recordingWire(clock: { now: number }) {
  const events: string[] = [];
  let depth = 0;
  return {
    events,
    get depth() {
      return depth;
    },
    cork() {
      depth += 1;
      events.push(`cork@${String(clock.now)}`);
    },
    uncork() {
      depth -= 1;
      events.push(`uncork@${String(clock.now)}`);
    },
  };
}

const tick = () =>
  new Promise<void>((resolve) => {
    process.nextTick(resolve);
  });

describe('pacer', () => {
  // The clock and the timers move by hand; process.nextTick stays real.
  const clock = { now: 1000 };
  const advance = (ms: number) => {
    clock.now += ms;
    vi.advanceTimersByTime(ms);
  };
  beforeEach(() => {
    clock.now = 1000;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes a quiet connection at the end of the tick, once for all writes of the tick', async () => {
    const wire = recordingWire(clock);
    const hold = pacer(wire, 50, () => clock.now);
    hold();
    hold();
    hold();
    expect(wire.depth).toBe(1);
    await tick();
    expect(wire.events).toEqual(['cork@1000', 'uncork@1000']);
  });

  it('holds writes that come within the window of the last write until the window ends', async () => {
    const wire = recordingWire(clock);
    const hold = pacer(wire, 50, () => clock.now);
    hold();
    await tick();
    advance(5);
    hold();
    advance(10);
    hold(); // joins the held batch
    await tick();
    expect(wire.depth).toBe(1);
    advance(34);
    expect(wire.depth).toBe(1);
    advance(1);
    expect(wire.depth).toBe(0);
    expect(wire.events).toEqual(['cork@1000', 'uncork@1000', 'cork@1005', 'uncork@1050']);
  });

  it('writes at once again once the connection has been quiet for a window', async () => {
    const wire = recordingWire(clock);
    const hold = pacer(wire, 20, () => clock.now);
    hold();
    await tick();
    advance(20);
    hold();
    await tick();
    expect(wire.events).toEqual(['cork@1000', 'uncork@1000', 'cork@1020', 'uncork@1020']);
  });

  it('does nothing without a wire', () => {
    expect(() => {
      pacer(undefined)();
    }).not.toThrow();
  });
});
