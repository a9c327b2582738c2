/**
 * How a store call becomes a span: a client span named `<port>.<verb>` (`log.append`,
 * `control.get`), child of whatever span is active (the request's), with the backend as
 * `db.system.name` and the verb as `db.operation.name`. A call that throws marks its span
 * as an error with `error.type`: the service error's code (`version_conflict`,
 * `store_unavailable`) or the error's class, never its message.
 *
 * Only a call made within a span gets one: a request's store calls do; those of the
 * background (turn drivers, sweeps, the retention purge) would each be a trace of one
 * span, and make none.
 *
 * Attributes name kinds, verbs and counts only: no stream or resource id, no record body,
 * no secret name or value, no key.
 */
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import {
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from '@opentelemetry/semantic-conventions';
import { ServiceError } from '../errors.ts';
import { DONE, Pulled, pullFrom, tellLater, type StepSink } from '../storage/pull.ts';

/** `db.system.name` of a port's `backend` (semantic conventions' names). */
function dbSystem(backend: string): string {
  return backend === 'postgres' ? DB_SYSTEM_NAME_VALUE_POSTGRESQL : backend;
}

/** `error.type` of a failure: a stable code or class name, never a message. */
export function errorType(error: unknown): string {
  if (error instanceof ServiceError) return error.code;
  return error instanceof Error ? error.name : 'unknown';
}

/**
 * Runs `call` in an active client span `name`: `after` adds attributes from its answer, a
 * throw marks the span an error with its `error.type`; the span ends with the call.
 */
export function clientSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  call: () => Promise<T>,
  after?: (answer: T) => Attributes,
): Promise<T> {
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      const answer = await call();
      if (after !== undefined) span.setAttributes(after(answer));
      return answer;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute(ATTR_ERROR_TYPE, errorType(error));
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Whether a span is active here (a request's, or another store call's). */
function inSpan(): boolean {
  return trace.getSpan(context.active()) !== undefined;
}

/** Makes the spans of one port over one backend. */
export class StoreSpans {
  readonly #tracer: Tracer;
  readonly #port: string;
  readonly #system: string;

  constructor(tracer: Tracer, port: 'log' | 'control', backend: string) {
    this.#tracer = tracer;
    this.#port = port;
    this.#system = dbSystem(backend);
  }

  /** Runs `call` inside a span for `verb`; `after` adds attributes from its answer. */
  run<T>(
    verb: string,
    attributes: Attributes,
    call: () => Promise<T>,
    after?: (answer: T) => Attributes,
  ): Promise<T> {
    if (!inSpan()) return call();
    const name = `${this.#port}.${verb}`;
    return clientSpan(this.#tracer, name, this.#attributes(verb, attributes), call, after);
  }

  /** Follows `records` inside a span for `verb` that ends with the iteration. */
  follow<T>(verb: string, records: AsyncIterable<T>, counted: () => number): AsyncIterable<T> {
    if (!inSpan()) return records;
    return new FollowSpan(records, counted, () =>
      this.#tracer.startSpan(`${this.#port}.${verb}`, {
        kind: SpanKind.CLIENT,
        attributes: this.#attributes(verb, {}),
      }),
    );
  }

  #attributes(verb: string, extra: Attributes): Attributes {
    return { [ATTR_DB_SYSTEM_NAME]: this.#system, [ATTR_DB_OPERATION_NAME]: verb, ...extra };
  }
}

/**
 * A followed iteration and its span, started by the first step and ended with the
 * iteration: by its end, its failure (marked as an error) or `return`. An iterator
 * rather than a generator over `records`, so that a `return` while a `next` waits
 * reaches `records` at once, as the log store's tail answers it (a generator would hold
 * it until the waiting `next` settles, which an idle tail's never does). It can be pulled
 * as the tail it follows can (`pull.ts`), and is then the sink of that tail's steps.
 */
class FollowSpan<T> extends Pulled<T> implements StepSink<T> {
  readonly #records: AsyncIterable<T>;
  readonly #counted: () => number;
  readonly #start: () => Span;
  #iterator: AsyncIterator<T> | undefined;
  #span: Span | undefined;
  #yielded = 0;
  #ended = false;
  /** The consumer of the pull under way. */
  #sink: StepSink<T> | undefined;

  constructor(records: AsyncIterable<T>, counted: () => number, start: () => Span) {
    super();
    this.#records = records;
    this.#counted = counted;
    this.#start = start;
  }

  pull(sink: StepSink<T>): void {
    if (this.#ended) {
      tellLater(sink, DONE);
      return;
    }
    if (this.#iterator === undefined) {
      this.#span = this.#start();
      this.#iterator = this.#records[Symbol.asyncIterator]();
    }
    this.#sink = sink;
    pullFrom(this.#iterator, this);
  }

  took(step: IteratorResult<T, void>): void {
    const sink = this.#sink;
    this.#sink = undefined;
    if (step.done === true) this.#end();
    else this.#yielded += 1;
    sink?.took(step);
  }

  failed(error: unknown): void {
    const sink = this.#sink;
    this.#sink = undefined;
    this.#span?.setStatus({ code: SpanStatusCode.ERROR });
    this.#span?.setAttribute(ATTR_ERROR_TYPE, errorType(error));
    this.#end();
    sink?.failed(error);
  }

  async return(): Promise<IteratorResult<T>> {
    const iterator = this.#iterator;
    this.#end();
    await iterator?.return?.();
    return { done: true, value: undefined };
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span?.setAttribute('agent_sessions.records', this.#yielded + this.#counted());
    this.#span?.end();
  }
}
