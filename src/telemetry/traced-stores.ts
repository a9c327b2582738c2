/**
 * The one seam where store calls become spans: `src/main.ts` passes the stores it opened
 * through `traceStores`, which wraps the log and control ports when tracing is on and
 * answers the stores untouched when it is off (no wrapper, no cost).
 */
import type { Tracer } from '@opentelemetry/api';
import type { Stores } from '../storage/open.ts';
import { TracedControlStore } from './traced-control-store.ts';
import { TracedLogStore } from './traced-log-store.ts';

/** `stores` with span-making log and control ports when `tracer` is given. */
export function traceStores(stores: Stores, tracer: Tracer | undefined): Stores {
  if (tracer === undefined) return stores;
  return {
    log: new TracedLogStore(stores.log, tracer),
    control: new TracedControlStore(stores.control, tracer),
    work: stores.work,
    ...(stores.redis === undefined ? {} : { redis: stores.redis }),
    close: () => stores.close(),
  };
}
