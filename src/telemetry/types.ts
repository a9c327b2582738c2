/** The shapes `start.ts` and the SDK it loads (`sdk.ts`) share. */
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
