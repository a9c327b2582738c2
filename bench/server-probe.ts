/**
 * Preloaded into a benchmarked service process (`--import`, see `turns-deployment.ts`):
 * watches the process's event loop (`monitorEventLoopDelay`) and its garbage collector
 * (a `gc` PerformanceObserver) and, on SIGUSR2, writes what it saw since the previous
 * signal to BENCH_PROBE_FILE as JSON (with its memory and active resources at that
 * moment) and starts a new window. The service's own code
 * knows nothing of it; a bench row takes one window around its load.
 */
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/** One window of the probe, as written to the file. */
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
   * `process.memoryUsage()` when the window closed, bytes; after a full collection when
   * the service runs with `--expose-gc` (`npm run soak`), so growth is what stays alive.
   */
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

const file = process.env.BENCH_PROBE_FILE;
if (file !== undefined) {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let gc = { count: 0, max: 0, total: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.total += entry.duration;
      gc.max = Math.max(gc.max, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    // Present only under --expose-gc: the soak reads memory after a full collection.
    const collect = (globalThis as { gc?: () => void }).gc;
    collect?.();
    const window: ProbeWindow = {
      loopP50: loop.percentile(50) / 1e6,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      gcCount: gc.count,
      gcMaxMs: gc.max,
      gcTotalMs: gc.total,
      memory: process.memoryUsage(),
      resources: resources(),
    };
    writeFileSync(file, JSON.stringify(window));
    loop.reset();
    gc = { count: 0, max: 0, total: 0 };
  });
}
