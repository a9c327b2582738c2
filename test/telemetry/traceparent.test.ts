import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
} from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { TraceContextPropagator } from '../../src/telemetry/traceparent.ts';

const propagator = new TraceContextPropagator();
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

/** The span context a request with `headers` continues, if any. */
const parentOf = (headers: Record<string, string>) =>
  trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));

describe('the W3C trace context propagator', () => {
  it('continues a well-formed traceparent as a remote parent', () => {
    expect(parentOf({ traceparent: `00-${TRACE}-${SPAN}-01` })).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(parentOf({ traceparent: `00-${TRACE}-${SPAN}-00` })?.traceFlags).toBe(TraceFlags.NONE);
  });

  it('takes the fields a later version appends, but not from version 00', () => {
    expect(parentOf({ traceparent: `01-${TRACE}-${SPAN}-01-later` })?.traceId).toBe(TRACE);
    expect(parentOf({ traceparent: `00-${TRACE}-${SPAN}-01-later` })).toBeUndefined();
  });

  it.each([
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['garbage', 'not a trace'],
  ])('starts a trace of its own on %s', (_name, traceparent) => {
    expect(parentOf({ traceparent })).toBeUndefined();
  });

  it('carries tracestate on, leaving out malformed entries', () => {
    const parent = parentOf({
      traceparent: `00-${TRACE}-${SPAN}-01`,
      tracestate: 'rojo=00f067aa0ba902b7, BAD KEY=1,congo=t61rcWkgMzE,tenant@vendor=x',
    });
    expect(parent?.traceState?.serialize()).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=x',
    );
    expect(parent?.traceState?.set('congo', 'y').serialize()).toBe(
      'congo=y,rojo=00f067aa0ba902b7,tenant@vendor=x',
    );
  });

  it('writes the headers of the active span', () => {
    const context = propagator.extract(
      ROOT_CONTEXT,
      { traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'rojo=1' },
      defaultTextMapGetter,
    );
    const headers: Record<string, string> = {};
    propagator.inject(context, headers, defaultTextMapSetter);
    expect(headers).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'rojo=1' });
    expect(propagator.fields()).toEqual(['traceparent', 'tracestate']);
  });
});
