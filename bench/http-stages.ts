/**
 * Where one append's time goes in the bench server (`http-server.ts`): per-stage timings
 * of every append, on the app and on the bare route alike, taken from outside the
 * service's code: Fastify hooks added by the bench, Fastify's own
 * `tracing:fastify.request.handler` diagnostics channel (with an `AsyncLocalStorage` bound
 * to its start, so the store's wrapper knows whose append it runs), a wrapper of the log
 * store the bench hands the app, and the tails' connections (`http-line-stages.ts`).
 * Nothing in `src/` knows of it.
 *
 * Stages of one `POST`, in ms (`APPEND_STAGES`):
 * - parse: the bench's `onRequest` hook (the last, after the app's own) to its
 *   `preValidation` hook: reading and parsing the body, and the hooks between;
 * - validate: that to the bench's `preHandler` hook: the route schema's checks (ours:
 *   zod's, of the params, headers and batch), and the app's pre-handlers;
 * - checks (ours only): the handler's start to its call of the log store: the session
 *   token, the write filter, the registered kinds' bodies, and the due mark of a message;
 * - store (ours only): the log store's `append`, from the call to its answer (the Lua
 *   round trip and what the store does around it);
 * - handler: the handler's start to its answer (for ours: checks, store and the answer's
 *   envelopes; for the bare route: the Lua call and the broadcast to its tails);
 * - reply: the handler's answer to `onResponse` (serializing, `onSend` hooks, writing).
 *
 * Stages of one line (`LINE_STAGES`):
 * - wake (ours only): the store's answer to the moment the store hands that record to
 *   its first tail (`TailOptions.deliver`; a record a tail reads through its iterator
 *   instead, behind a backlog, is not counted). Negative on Redis: an append of this
 *   process hands its records to the process's tails within the store call;
 * - take, held, write: each tail's taking of the line, its wait for its connection's
 *   next write and that write (`http-line-stages.ts`).
 *
 * Collection is on only between `start()` and `stop()` (the measured seconds of a latency
 * run); outside them each hook is one boolean test, and the diagnostics channel has no
 * subscriber (so Fastify skips its per-request store).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { tracingChannel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LogStore, StoredRecord, TailOptions } from '../src/storage/log-store.ts';
import {
  LINE_STAGES,
  timedTake,
  watchTailSocket,
  type LineSamples,
  type LineStage,
} from './http-line-stages.ts';

export const APPEND_STAGES = ['parse', 'validate', 'checks', 'store', 'handler', 'reply'] as const;
export type Stage = (typeof APPEND_STAGES)[number] | 'wake' | LineStage;
/** The stages of the table of where a line goes. */
export const DELIVERY_STAGES: readonly Stage[] = ['wake', ...LINE_STAGES];
export const STAGES: readonly Stage[] = [...APPEND_STAGES, ...DELIVERY_STAGES];
export type Side = 'ours' | 'bare';

/** p50 and p99 of a stage, ms, and how many samples it was taken over. */
export interface StageFigure {
  readonly p50: number;
  readonly p99: number;
  readonly count: number;
}
export type StageFigures = Record<Side, Record<Stage, StageFigure>>;

interface Stamps {
  readonly side: Side;
  readonly request: number;
  validation?: number;
  preHandler?: number;
  start?: number;
  called?: number;
  answered?: number;
}

interface HandlerMessage {
  readonly request: FastifyRequest;
}

type Samples = Record<Stage, number[]>;
const emptySide = (): Samples =>
  Object.fromEntries(STAGES.map((stage) => [stage, []])) as unknown as Samples;
const emptySamples = (): Record<Side, Samples> => ({ ours: emptySide(), bare: emptySide() });

function figure(values: number[]): StageFigure {
  const sorted = values.sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.floor(q * (sorted.length - 1))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), count: sorted.length };
}

export class StageTimer {
  #on = false;
  #samples = emptySamples();
  readonly #stamps = new WeakMap<FastifyRequest, Stamps>();
  /** The stamps of the request whose handler runs, bound to the handler channel's start. */
  readonly #current = new AsyncLocalStorage<Stamps | undefined>();
  /** By `stream/cursor`: when the store answered a record's append, and when a tail first saw it. */
  readonly #landed = new Map<string, number>();
  readonly #seen = new Map<string, number>();
  readonly #channel = tracingChannel<unknown, HandlerMessage>('fastify.request.handler');
  readonly #handlers = {
    start: (message: HandlerMessage) => {
      const stamps = this.#stamps.get(message.request);
      if (stamps !== undefined) stamps.start = performance.now();
    },
    asyncStart: (message: HandlerMessage) => {
      const stamps = this.#stamps.get(message.request);
      if (stamps !== undefined) stamps.answered = performance.now();
    },
    end: () => undefined,
    asyncEnd: () => undefined,
    error: () => undefined,
  };
  /** The line stages' samples of each side, as `http-line-stages.ts` pushes them. */
  readonly #lines: Record<Side, LineSamples> = {
    ours: this.#lineSamples('ours'),
    bare: this.#lineSamples('bare'),
  };

  #lineSamples(side: Side): LineSamples {
    return {
      collecting: () => this.#on,
      push: (stage, ms) => {
        this.#samples[side][stage].push(ms);
      },
    };
  }

  /**
   * Times the appends `POST url` of `app` as `side`, and the connections of its tails,
   * `GET tailUrl`; call before the app is ready.
   */
  hook(app: FastifyInstance, side: Side, url: string, tailUrl: string): void {
    app.addHook('onRequest', (request, _reply, done) => {
      // `routeOptions` is built anew on each read: an append that is not timed reads none.
      if (request.method === 'GET') {
        if (request.routeOptions.url === tailUrl) {
          watchTailSocket(request.raw.socket, this.#lines[side]);
        }
      } else if (this.#on && request.method === 'POST' && request.routeOptions.url === url) {
        this.#stamps.set(request, { side, request: performance.now() });
      }
      done();
    });
    app.addHook('preValidation', (request, _reply, done) => {
      this.#stamp(request, 'validation');
      done();
    });
    app.addHook('preHandler', (request, _reply, done) => {
      this.#stamp(request, 'preHandler');
      done();
    });
    app.addHook('onResponse', (request, _reply, done) => {
      const stamps = this.#stamps.get(request);
      if (stamps !== undefined && this.#on) this.#record(stamps, performance.now());
      done();
    });
  }

  #stamp(request: FastifyRequest, name: 'validation' | 'preHandler'): void {
    const stamps = this.#stamps.get(request);
    if (stamps !== undefined) stamps[name] = performance.now();
  }

  /** `send`, a bare tail's write of a line, timed as its `take`. */
  bareTake<Line>(send: (line: Line) => void): (line: Line) => void {
    return timedTake(send, this.#lines.bare);
  }

  #record(stamps: Stamps, responded: number): void {
    const { validation, preHandler, start, called, answered } = stamps;
    if (validation === undefined || preHandler === undefined) return;
    if (start === undefined || answered === undefined) return;
    const samples = this.#samples[stamps.side];
    samples.parse.push(validation - stamps.request);
    samples.validate.push(preHandler - validation);
    if (called !== undefined) samples.checks.push(called - start);
    samples.handler.push(answered - start);
    samples.reply.push(responded - answered);
  }

  /**
   * `store` with its `append` timed (and the call's moment given to the stamps of the
   * request it runs for), each record's first sight by a tail noted, and each tail's
   * taking of a record timed; every other member is the store's own.
   */
  logStore(store: LogStore): LogStore {
    const append: LogStore['append'] = async (batch) => {
      if (!this.#on) return store.append(batch);
      const called = performance.now();
      const stamps = this.#current.getStore();
      if (stamps !== undefined) stamps.called = called;
      const result = await store.append(batch);
      const answered = performance.now();
      this.#samples.ours.store.push(answered - called);
      for (const { envelope } of result.records) {
        const key = `${batch.stream}/${String(envelope.cursor)}`;
        const seen = this.#seen.get(key);
        // A tail may see a record before its append's answer is read: a negative wake.
        if (seen === undefined) this.#landed.set(key, answered);
        else {
          this.#seen.delete(key);
          this.#samples.ours.wake.push(seen - answered);
        }
      }
      return result;
    };
    const tail: LogStore['tail'] = (stream, options) => {
      const sight = (record: StoredRecord): void => {
        const key = `${stream}/${String(record.envelope.cursor)}`;
        const landed = this.#landed.get(key);
        if (landed === undefined) {
          if (!this.#seen.has(key)) this.#seen.set(key, performance.now());
          return;
        }
        this.#landed.delete(key);
        this.#samples.ours.wake.push(performance.now() - landed);
      };
      const deliver = options.deliver;
      if (deliver === undefined) return store.tail(stream, options);
      const take = timedTake(deliver, this.#lines.ours);
      const timed: TailOptions = {
        ...options,
        deliver: (record: StoredRecord) => {
          if (this.#on) sight(record);
          return take(record);
        },
      };
      return store.tail(stream, timed);
    };
    return new Proxy(store, {
      get: (target, name) => {
        if (name === 'append') return append;
        if (name === 'tail') return tail;
        // Read on the store itself, so its getters and methods see their own private fields.
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
  }

  /** Starts collecting, from nothing. */
  start(): void {
    this.#samples = emptySamples();
    this.#landed.clear();
    this.#seen.clear();
    this.#channel.subscribe(this.#handlers);
    this.#channel.start.bindStore(this.#current, (message) => this.#stamps.get(message.request));
    this.#on = true;
  }

  /** Stops collecting and answers what was collected since `start`. */
  stop(): StageFigures {
    this.#on = false;
    this.#channel.start.unbindStore(this.#current);
    this.#channel.unsubscribe(this.#handlers);
    this.#landed.clear();
    this.#seen.clear();
    const side = (samples: Samples) =>
      Object.fromEntries(STAGES.map((stage) => [stage, figure(samples[stage])])) as Record<
        Stage,
        StageFigure
      >;
    return { ours: side(this.#samples.ours), bare: side(this.#samples.bare) };
  }
}
