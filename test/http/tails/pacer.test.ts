import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Pacer } from '../../../src/http/tails/pacer.ts';

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

describe('Pacer', () => {
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

  it('writes a quiet connection once the code that wrote to it has run, once for its writes', async () => {
    const wire = recordingWire(clock);
    const hold = new Pacer(50, () => clock.now).wire(wire);
    hold.hold();
    hold.hold();
    hold.hold();
    expect(wire.depth).toBe(1);
    await tick();
    expect(wire.events).toEqual(['cork@1000', 'uncork@1000']);
  });

  it('does not make a quiet connection wait for the rest of the tick', async () => {
    const wire = recordingWire(clock);
    const hold = new Pacer(50, () => clock.now).wire(wire);
    // A store's answer hands the line over; what its caller does next runs after it.
    await Promise.resolve().then(() => {
      hold.hold();
    });
    expect(wire.depth).toBe(0);
    // The tick's own callbacks come later still: the line did not wait for them.
    await tick();
    expect(wire.events).toEqual(['cork@1000', 'uncork@1000']);
  });

  it('holds writes that come within the window of the last write until the window ends', async () => {
    const wire = recordingWire(clock);
    const hold = new Pacer(50, () => clock.now).wire(wire);
    hold.hold();
    await tick();
    advance(5);
    hold.hold();
    advance(10);
    hold.hold(); // joins the held batch
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
    const hold = new Pacer(20, () => clock.now).wire(wire);
    hold.hold();
    await tick();
    advance(20);
    hold.hold();
    await tick();
    expect(wire.events).toEqual(['cork@1000', 'uncork@1000', 'cork@1020', 'uncork@1020']);
  });

  it('holds many connections behind one timer, each for its own window', async () => {
    const pacer = new Pacer(10, () => clock.now);
    const first = recordingWire(clock);
    const second = recordingWire(clock);
    const holdFirst = pacer.wire(first);
    const holdSecond = pacer.wire(second);
    holdFirst.hold();
    await tick();
    advance(5);
    holdSecond.hold();
    await tick();
    advance(1);
    holdFirst.hold();
    holdSecond.hold();
    // The held connections wait behind one timer, not one each.
    expect(vi.getTimerCount()).toBe(1);
    advance(4);
    expect([first.depth, second.depth]).toEqual([0, 1]);
    advance(5);
    expect([first.depth, second.depth]).toEqual([0, 0]);
    expect(first.events).toEqual(['cork@1000', 'uncork@1000', 'cork@1006', 'uncork@1010']);
    expect(second.events).toEqual(['cork@1005', 'uncork@1005', 'cork@1006', 'uncork@1015']);
  });

  it('writes the connections written to together in one callback', async () => {
    const pacer = new Pacer(10, () => clock.now);
    const wires = Array.from({ length: 100 }, () => recordingWire(clock));
    for (const wire of wires) pacer.wire(wire).hold();
    expect(wires.every((wire) => wire.depth === 1)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    await tick();
    expect(wires.every((wire) => wire.depth === 0)).toBe(true);
  });

  it('writes what it holds when the app closes', () => {
    const pacer = new Pacer(10, () => clock.now);
    const wire = recordingWire(clock);
    const hold = pacer.wire(wire);
    hold.hold();
    return tick().then(() => {
      hold.hold();
      expect(wire.depth).toBe(1);
      pacer.close();
      expect(wire.depth).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  it('does nothing without a wire', () => {
    expect(() => {
      new Pacer().wire(undefined).hold();
    }).not.toThrow();
  });
});
