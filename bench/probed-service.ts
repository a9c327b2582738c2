/**
 * How the benches that start the embedded service as a process (`npm run bench`'s memory
 * part, `npm run bench:turns`) start it: with the probe preloaded (`server-probe.ts`) and
 * the bench's own Node flags, both on its command line after the start script's, and
 * every rate-limit family out of reach.
 */
import { fileURLToPath } from 'node:url';
import { START_FLAGS } from '../test/support/start-flags.ts';

/**
 * The start script's preloads (`--import`, read from package.json: the compile cache's,
 * `src/compile-cache.js`), for a baseline process the bench starts beside the service: it
 * then takes its modules from the same cache and, as the service, loads no TypeScript
 * stripper (some 18 MB).
 */
export const START_PRELOADS = START_FLAGS.filter((flag) => flag.startsWith('--import='));

/** Preloaded into the service: its event-loop, GC and heap figures for the rows. */
export const PROBE = fileURLToPath(new URL('server-probe.ts', import.meta.url));

/**
 * Far above what loopback reaches, as `bench/http-server.ts` sets them: the limiter still
 * runs on every request, but the bench measures the service, not refusals.
 */
const RATE_LIMIT = '10000000';

/** The service's environment for a bench, its probe (`probedFlags`) writing to `probeFile`. */
export function probedEnv(probeFile: string): Record<string, string> {
  return {
    RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    TAIL_RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    CONSOLE_RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    OPEN_RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    APPDOC_RATE_LIMIT_PER_MINUTE: RATE_LIMIT,
    BENCH_PROBE_FILE: probeFile,
  };
}

/**
 * The space-separated Node flags of the environment variable `name` (for example
 * `--trace-gc`, or `--cpu-prof --cpu-prof-dir=.tmp/prof`), for the service's command line
 * after the start script's flags, so that one they both name (`--max-semi-space-size`)
 * is the bench's: given in NODE_OPTIONS, the command line's would win.
 */
export function flagsFrom(name: string): string[] {
  return (process.env[name] ?? '').split(' ').filter((flag) => flag !== '');
}

/**
 * The service's own Node flags for a bench: the probe, then those of the environment
 * variable `name` (`flagsFrom`). They follow the start script's, whose preload turns the
 * compile cache on, so the probe, TypeScript like the service, is taken from the cache.
 */
export function probedFlags(name: string): string[] {
  return [`--import=${PROBE}`, ...flagsFrom(name)];
}
