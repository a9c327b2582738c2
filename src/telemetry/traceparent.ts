/**
 * The W3C Trace Context propagator (https://www.w3.org/TR/trace-context/): reads a
 * caller's `traceparent` and `tracestate` so its trace continues through this service,
 * and writes them on the way out. The OpenTelemetry API defines the propagator interface
 * but ships none; the SDK's lives in `@opentelemetry/core`, which is not one of our
 * dependencies, and the format is a dozen lines.
 */
import {
  isSpanContextValid,
  trace,
  TraceFlags,
  type Context,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  type TraceState,
} from '@opentelemetry/api';

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';

/** version-traceid-parentid-flags; a later version may append fields after a dash. */
const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** One header's value: a repeated header is joined as HTTP joins list headers. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** A `tracestate` entry: a (possibly tenant@system) key and an opaque printable value. */
const ENTRY =
  /^([a-z0-9][a-z0-9_\-*/@]{0,255})=([\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e])$/;
/** The most entries a `tracestate` carries on. */
const MAX_ENTRIES = 32;

/** The vendors' entries of `tracestate`, newest first, as the API's `TraceState`. */
class ListState implements TraceState {
  readonly #entries: ReadonlyMap<string, string>;

  constructor(entries: ReadonlyMap<string, string>) {
    this.#entries = entries;
  }

  /** Parses a header's value; malformed entries are left out, as the spec allows. */
  static parse(header: string): ListState {
    const entries = new Map<string, string>();
    for (const member of header.split(',')) {
      const match = ENTRY.exec(member.trim());
      if (match?.[1] !== undefined && match[2] !== undefined && !entries.has(match[1])) {
        entries.set(match[1], match[2]);
      }
    }
    return new ListState(new Map([...entries].slice(0, MAX_ENTRIES)));
  }

  set(key: string, value: string): TraceState {
    return new ListState(new Map([[key, value], ...[...this.#entries].filter(([k]) => k !== key)]));
  }

  unset(key: string): TraceState {
    return new ListState(new Map([...this.#entries].filter(([k]) => k !== key)));
  }

  get(key: string): string | undefined {
    return this.#entries.get(key);
  }

  serialize(): string {
    return [...this.#entries].map(([key, value]) => `${key}=${value}`).join(',');
  }
}

/** Continues and passes on W3C trace context headers. */
export class TraceContextPropagator implements TextMapPropagator {
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    const span = trace.getSpanContext(context);
    if (span === undefined || !isSpanContextValid(span)) return;
    const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
    setter.set(carrier, TRACEPARENT, `00-${span.traceId}-${span.spanId}-${flags}`);
    const state = span.traceState?.serialize();
    if (state !== undefined && state !== '') setter.set(carrier, TRACESTATE, state);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const header = single(getter.get(carrier, TRACEPARENT))?.trim();
    const match = header === undefined ? null : HEADER.exec(header);
    if (match === null) return context;
    const [, version, traceId = '', spanId = '', flags = '00', rest] = match;
    // Version ff is invalid; version 00 has exactly four fields.
    if (version === 'ff' || (version === '00' && rest !== undefined)) return context;
    const state = single(getter.get(carrier, TRACESTATE));
    const parent = {
      traceId,
      spanId,
      traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED,
      isRemote: true,
      ...(state === undefined ? {} : { traceState: ListState.parse(state) }),
    };
    // An all-zero trace or span id is invalid: the request starts a trace of its own.
    return isSpanContextValid(parent) ? trace.setSpanContext(context, parent) : context;
  }

  fields(): string[] {
    return [TRACEPARENT, TRACESTATE];
  }
}
