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
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import manifest from '../../package.json' with { type: 'json' };
import type { Telemetry, TelemetrySettings } from './start.ts';
import { TraceContextPropagator } from './traceparent.ts';

/** The instrumentation scope our spans are made under: the service's own code. */
const SCOPE = manifest.name;

/** `OTEL_EXPORTER_OTLP_ENDPOINT` is a base: the trace signal goes to `v1/traces` under it. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** Starts the provider, registers it globally with the context manager and propagator. */
export function startSdk(settings: TelemetrySettings): Telemetry {
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
    // Shutting down flushes: the batch still queued is exported before this resolves.
    shutdown: async () => {
      await provider.shutdown();
      contextManager.disable();
    },
  };
}
