/**
 * Whether this process traces: with `OTEL_EXPORTER_OTLP_ENDPOINT` set,
 * `src/main.ts` starts the OpenTelemetry SDK (`sdk.ts`) and hands its tracer to the
 * request spans (`src/http/request-spans.ts`) and the store spans (`traced-stores.ts`).
 * Without it nothing of the SDK is imported, no span is made and no port is wrapped: the
 * hot path is the same code as a build without tracing.
 */
import type { Telemetry, TelemetrySettings } from './types.ts';

export type { Telemetry, TelemetrySettings };

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
