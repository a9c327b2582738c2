/**
 * The OpenTelemetry SDK, loaded only when tracing is on (`start.ts` imports this module
 * dynamically): a tracer provider that batches finished spans to an OTLP/HTTP collector
 * as JSON, the AsyncLocalStorage context manager (a store call's span finds its request's
 * span as parent across awaits), and the W3C Trace Context propagator (a caller's
 * `traceparent` continues its trace).
 *
 * The exporter reads the other standard `OTEL_EXPORTER_OTLP_*` variables itself (headers,
 * timeout, compression, certificates); the endpoint is the one `src/config.ts` parsed.
 */
import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import manifest from '../../package.json' with { type: 'json' };
import type { Telemetry, TelemetrySettings } from './types.ts';
import { TraceContextPropagator } from './traceparent.ts';

/** The instrumentation scope our spans are made under: the service's own code. */
const SCOPE = manifest.name;

/** `OTEL_EXPORTER_OTLP_ENDPOINT` is a base: the trace signal goes to `v1/traces` under it. */
function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** How long a stop waits for the last spans to reach the collector, ms. */
const FLUSH_MS = 3_000;

/** The text of a failure the SDK reports: its message, never the objects it carries. */
function describe(message: string, args: readonly unknown[]): string {
  const cause = args.find((arg) => arg instanceof Error);
  return cause === undefined ? message : `${message} ${cause.message}`;
}

/**
 * Starts the provider, registers it globally with the context manager and propagator.
 * The SDK's own warnings and errors (a collector that refuses or cannot be reached) go
 * to `warn`: tracing never fails a request or a stop.
 */
export function startSdk(settings: TelemetrySettings, warn: (message: string) => void): Telemetry {
  const report = (message: string, ...args: unknown[]): void => {
    warn(`opentelemetry: ${describe(message, args)}`);
  };
  const ignore = (): void => undefined;
  diag.setLogger(
    { error: report, warn: report, info: ignore, debug: ignore, verbose: ignore },
    DiagLogLevel.WARN,
  );
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new TraceContextPropagator());
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName ?? manifest.name,
      [ATTR_SERVICE_VERSION]: manifest.version,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: tracesUrl(settings.endpoint) }),
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  return {
    tracer: provider.getTracer(SCOPE, manifest.version),
    // Shutting down flushes the spans still queued; a collector that does not take them
    // within FLUSH_MS does not hold the stop up any longer.
    shutdown: async () => {
      const flushed = provider.shutdown().then(
        () => true,
        (error: unknown) => {
          report('traces not flushed:', error);
          return true;
        },
      );
      const late = new Promise<boolean>((resolve) => {
        setTimeout(resolve, FLUSH_MS, false).unref();
      });
      if (!(await Promise.race([flushed, late]))) report(`traces not flushed in ${FLUSH_MS} ms`);
      contextManager.disable();
    },
  };
}
