/**
 * The span-making stores (`src/telemetry/traced-*.ts`) are the stores they wrap: the log
 * and control store conformance suites run against them over SQLite, with every call made
 * inside a span (as a request's are), so each goes through the wrapper's span path. The
 * spans the suites caused are then checked: named by port and verb, under their parent,
 * naming the backend, and holding no stream id, resource id or secret.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  context,
  ROOT_CONTEXT,
  trace,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteControlStore, openSqliteLogStore } from '../../src/storage/sql/open.ts';
import { TracedControlStore } from '../../src/telemetry/traced-control-store.ts';
import { TracedLogStore } from '../../src/telemetry/traced-log-store.ts';
import { describeControlStore } from '../contracts/control-store.contract.ts';
import { describeLogStore } from '../contracts/log-store.contract.ts';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({
  spanProcessors: [new SimpleSpanProcessor({ exporter })],
});
const tracer = provider.getTracer('traced-stores-test');
/** The span every store call of the suites runs under, standing for a request's. */
const request = tracer.startSpan('request');
const within = trace.setSpan(ROOT_CONTEXT, request);

/**
 * A context manager whose active context is always `within`: the suites' calls, wherever
 * they run, find the request span active.
 */
class WithinRequest implements ContextManager {
  active(): Context {
    return within;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    _context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return fn.call(thisArg, ...args);
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

beforeAll(() => {
  context.setGlobalContextManager(new WithinRequest());
});
afterAll(() => {
  context.disable();
});

describeLogStore('traced sqlite', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'traced-log-'));
  const file = path.join(folder, 'service.sqlite');
  return {
    open: async () => new TracedLogStore(await openSqliteLogStore({ file }), tracer),
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
});

describeControlStore('traced sqlite', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'traced-control-'));
  const file = path.join(folder, 'service.sqlite');
  const secretsKey = randomBytes(32);
  return {
    open: async () =>
      new TracedControlStore(await openSqliteControlStore({ file, secretsKey }), tracer),
    atRest: async () => {
      const files = (await readdir(folder)).map((name) => path.join(folder, name));
      const bytes = await Promise.all(files.map((name) => readFile(name)));
      return Buffer.concat(bytes).toString('latin1');
    },
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
});

describe('the spans the suites made', () => {
  it('name the port and verb, sit under the request and name the backend', () => {
    const spans = exporter.getFinishedSpans();
    const names = new Set(spans.map((span) => span.name));
    for (const name of ['log.append', 'log.read', 'log.tail', 'log.archive', 'control.write']) {
      expect(names).toContain(name);
    }
    for (const span of spans) {
      expect(span.name).toMatch(/^(log|control)\.[a-zA-Z]+$/);
      expect(span.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(span.attributes['db.system.name']).toBe('sqlite');
      expect(span.attributes['db.operation.name']).toBe(span.name.split('.')[1]);
    }
    // A refused call is an error span naming the service error's code.
    const refused = spans.filter((span) => span.attributes['error.type'] !== undefined);
    expect(refused.map((span) => span.attributes['error.type'])).toContain('version_conflict');
  });

  it('hold nothing but names, kinds and counts', () => {
    for (const span of exporter.getFinishedSpans()) {
      for (const value of Object.values(span.attributes)) {
        expect(['string', 'number']).toContain(typeof value);
        // Stream and resource ids of the suites (`s-<uuid>`, uuids) and secrets never show.
        expect(String(value)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-|^s-/);
      }
    }
  });
});
