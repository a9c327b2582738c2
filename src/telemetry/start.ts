/**
 * Whether this process traces (issue 15 item 6): with `OTEL_EXPORTER_OTLP_ENDPOINT` set,
 * `src/main.ts` starts the OpenTelemetry SDK (`sdk.ts`) and hands its tracer to the
 * request spans (`src/http/request-spans.ts`) and the store spans (`traced-stores.ts`).
 * Without it nothing of the SDK is imported, no span is made and no port is wrapped: the
 * hot path is the same code as a build without tracing.
 */
import type { Tracer } from '@opentelemetry/api';

/** What `src/main.ts` read from the environment (`src/config.ts`). */
export interface TelemetrySettings {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL; spans go to `/v1/traces`. */
  readonly endpoint: string;
  /** `OTEL_SERVICE_NAME`; the package's name when absent. */
  readonly serviceName?: string | undefined;
}

/** A started (or absent) tracing pipeline. */
export interface Telemetry {
  /** The tracer spans are made with; undefined when tracing is off. */
  readonly tracer: Tracer | undefined;
  /**
   * Exports the spans still queued and stops the pipeline; call after the server drained.
   * Never rejects, and gives up on a collector that does not answer within 3 s.
   */
  shutdown(): Promise<void>;
}

/** Tracing off: no tracer, nothing to flush. */
export const NO_TELEMETRY: Telemetry = {
  tracer: undefined,
  shutdown: () => Promise.resolve(),
};

/**
 * Starts tracing when `settings` name an endpoint, or answers `NO_TELEMETRY` without
 * importing the SDK. `warn` hears what goes wrong on the way to the collector.
 */
export async function startTelemetry(
  settings: TelemetrySettings | undefined,
  warn: (message: string) => void,
): Promise<Telemetry> {
  if (settings === undefined) return NO_TELEMETRY;
  const { startSdk } = await import('./sdk.ts');
  return startSdk(settings, warn);
}
