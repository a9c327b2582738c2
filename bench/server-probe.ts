/**
 * What a benchmarked server's event loop, garbage collector and memory did over a window
 * of its load. `Probe` watches the event loop (`monitorEventLoopDelay`) and the collector
 * (a `gc` PerformanceObserver); `window()` reports what they saw since the previous
 * window and starts the next.
 *
 * Preloaded into a benchmarked service process (`--import`, see `turns-deployment.ts`),
 * this module starts a probe when BENCH_PROBE_FILE is set and, on SIGUSR2, writes a
 * window to that file as JSON. The service's own code knows nothing of it. When a file
 * `<BENCH_PROBE_FILE>.collect` exists at the signal, the window is `retained`: taken
 * after full, compacting collections (through `gc`, exposed here rather than by a flag
 * on the service), so that its memory is what the process retains, not garbage it has
 * yet to collect. Each window also counts the process's active resources (sockets,
 * timers, file handles) by type. A server that runs the bench's code in its own process
 * (`http-server.ts`) makes a `Probe` of its own instead.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { GCProfiler, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** One window of the probe. */
export interface ProbeWindow {
  /** Event-loop delay over the window, ms. */
  readonly loopP50: number;
  readonly loopP99: number;
  readonly loopMax: number;
  /** Garbage collections in the window, their longest pause and their total, ms. */
  readonly gcCount: number;
  readonly gcMaxMs: number;
  readonly gcTotalMs: number;
  /**
   * Bytes the process allocated on V8's heap in the window: what the used heap grew by
   * between collections (`v8.GCProfiler` reads it before and after each), whether it
   * lived or not. Unlike times, the same work allocates the same bytes on a busy machine
   * as on a quiet one, so a change to a path's allocations shows from one run to the next.
   */
  readonly allocatedBytes: number;
  /** `process.memoryUsage()` when the window closed (after full collections when retained), bytes. */
  readonly memory: NodeJS.MemoryUsage;
  /** `process.getActiveResourcesInfo()` when the window closed, counted by type. */
  readonly resources: Readonly<Record<string, number>>;
}

/** The process's active resources (sockets, timers, file handles…) by type. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/** Collections run before a retained reading: the second frees what the first's finalisers let go. */
const COLLECTIONS = 2;

type Collect = (options: { type: 'major'; execution: 'sync' }) => void;

export class Probe {
  readonly #loop = monitorEventLoopDelay({ resolution: 1 });
  #gc = { count: 0, max: 0, total: 0 };
  /** Collections that began before this were the probe's own. */
  #ownUntil = 0;
  #collect: Collect | undefined;
  #profiler = new GCProfiler();
  /** The used heap when the window began. */
  #usedAtStart = getHeapStatistics().used_heap_size;

  constructor() {
    this.#loop.enable();
    this.#profiler.start();
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if (entry.startTime < this.#ownUntil) continue;
        this.#gc.count += 1;
        this.#gc.total += entry.duration;
        this.#gc.max = Math.max(this.#gc.max, entry.duration);
      }
    }).observe({ entryTypes: ['gc'] });
  }

  /**
   * What was seen since the previous window; `retained`: memory read after full
   * collections, which are left out of the figures of this window and the next.
   */
  window(retained = false): ProbeWindow {
    if (retained) {
      if (this.#collect === undefined) {
        setFlagsFromString('--expose-gc');
        this.#collect = runInNewContext('gc') as Collect;
      }
      for (let i = 0; i < COLLECTIONS; i += 1) this.#collect({ type: 'major', execution: 'sync' });
      this.#ownUntil = performance.now();
    }
    const allocatedBytes = this.#allocated();
    const window: ProbeWindow = {
      loopP50: this.#loop.percentile(50) / 1e6,
      loopP99: this.#loop.percentile(99) / 1e6,
      loopMax: this.#loop.max / 1e6,
      gcCount: this.#gc.count,
      gcMaxMs: this.#gc.max,
      gcTotalMs: this.#gc.total,
      allocatedBytes,
      memory: process.memoryUsage(),
      resources: resources(),
    };
    this.#loop.reset();
    this.#gc = { count: 0, max: 0, total: 0 };
    return window;
  }

  /** Bytes allocated since the window began; starts the next window's count. */
  #allocated(): number {
    const collections = this.#profiler.stop().statistics;
    let allocated = 0;
    let used = this.#usedAtStart;
    for (const { beforeGC, afterGC } of collections) {
      allocated += Math.max(0, beforeGC.heapStatistics.usedHeapSize - used);
      used = afterGC.heapStatistics.usedHeapSize;
    }
    const now = getHeapStatistics().used_heap_size;
    allocated += Math.max(0, now - used);
    this.#usedAtStart = now;
    this.#profiler.start();
    return allocated;
  }
}

const file = process.env.BENCH_PROBE_FILE;
if (file !== undefined) {
  const probe = new Probe();
  process.on('SIGUSR2', () => {
    const retained = existsSync(`${file}.collect`);
    if (retained) rmSync(`${file}.collect`);
    writeFileSync(file, JSON.stringify(probe.window(retained)));
  });
}
