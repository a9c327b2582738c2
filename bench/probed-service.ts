/**
 * How the benches that start the embedded service as a process (`npm run bench`'s memory
 * part, `npm run bench:turns`) start it: with the probe preloaded (`server-probe.ts`),
 * every rate-limit family out of reach, and the bench's own Node flags on its command line.
 */
import { fileURLToPath } from 'node:url';

/**
 * The service's compile cache (`src/compile-cache.js`), named in the environment too so
 * that Node turns it on before any preload: the probe, TypeScript like the service, is
 * then taken from it and loads no stripper (some 18 MB) into the process measured.
 */
export const COMPILE_CACHE = fileURLToPath(
  new URL('../node_modules/.cache/agent-session-service/', import.meta.url),
);

/** Preloaded into the service: its event-loop, GC and heap figures for the rows. */
export const PROBE = fileURLToPath(new URL('server-probe.ts', import.meta.url));

/**
 * Far above what loopback reaches, as `bench/http-server.ts` sets them: the limiter still
 * runs on every request, but the bench measures the service, not refusals.
 */
const RATE_LIMIT = '10000000';

/** The service's environment for a bench, its probe writing to `probeFile`. */
export function probedEnv(probeFile: string): Record<string, string> {
  return {
    RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    TAIL_RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    CONSOLE_RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    OPEN_RATE_LIMIT_PER_SECOND: RATE_LIMIT,
    APPDOC_RATE_LIMIT_PER_MINUTE: RATE_LIMIT,
    NODE_OPTIONS: `--import=${PROBE}`,
    NODE_COMPILE_CACHE: COMPILE_CACHE,
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
