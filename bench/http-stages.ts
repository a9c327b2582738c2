/**
 * Where one append's time goes in the bench server (`http-server.ts`): per-stage timings
 * of every append, on the app and on the bare route alike, taken from outside the
 * service's code: Fastify hooks added by the bench, Fastify's own
 * `tracing:fastify.request.handler` diagnostics channel, and a wrapper of the log store
 * the bench hands the app. Nothing in `src/` knows of it.
 *
 * Stages of one `POST`, in ms:
 * - parse: `onRequest` to the bench's `preHandler` hook (reading and parsing the body,
 *   schema validation, the hooks before it, such as the rate limiter's);
 * - hooks: that `preHandler` to the handler's start (the route's other pre-handlers);
 * - handler: the handler's start to its answer (for ours: token, admission, the store
 *   call; for the bare route: the Lua call and the broadcast to its tails);
 * - store (ours only): the log store's `append`, from the call to its answer (the Lua
 *   round trip and what the store does around it);
 * - reply: the handler's answer to `onResponse` (serializing, `onSend` hooks, writing);
 * - wake (ours only): the store's answer to the moment the store hands that record to
 *   its first tail (`TailOptions.deliver`; a record a tail reads through its iterator
 *   instead, behind a backlog, is not counted). Negative on Redis: an append of this
 *   process hands its records to the process's tails within the store call. What follows, the encoding
 *   and the write to each tail's socket (paced, `pacer.ts`), runs in the tail's code and
 *   is not seen here; the client's append-to-delivery figures include it.
 *
 * Collection is on only between `start()` and `stop()` (the measured seconds of a latency
 * run); outside them each hook is one boolean test, and the diagnostics channel has no
 * subscriber (so Fastify skips its per-request store).
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LogStore, StoredRecord, TailOptions } from '../src/storage/log-store.ts';

export const STAGES = ['parse', 'hooks', 'handler', 'store', 'reply', 'wake'] as const;
export type Stage = (typeof STAGES)[number];
export type Side = 'ours' | 'bare';

/** p50 and p99 of a stage, ms, and how many appends it was taken over. */
export interface StageFigure {
  readonly p50: number;
  readonly p99: number;
  readonly count: number;
}
export type StageFigures = Record<Side, Record<Stage, StageFigure>>;

interface Stamps {
  readonly side: Side;
  readonly request: number;
  preHandler?: number;
  start?: number;
  answered?: number;
}

interface HandlerMessage {
  readonly request: FastifyRequest;
}

const emptySamples = (): Record<Side, Record<Stage, number[]>> => ({
  ours: { parse: [], hooks: [], handler: [], store: [], reply: [], wake: [] },
  bare: { parse: [], hooks: [], handler: [], store: [], reply: [], wake: [] },
});

function figure(values: number[]): StageFigure {
  const sorted = values.sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.floor(q * (sorted.length - 1))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), count: sorted.length };
}

export class StageTimer {
  #on = false;
  #samples = emptySamples();
  readonly #stamps = new WeakMap<FastifyRequest, Stamps>();
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

  /** Times `method url` of `app` as `side`; call before the app is ready. */
  hook(app: FastifyInstance, side: Side, url: string): void {
    const ours = (request: FastifyRequest) =>
      this.#on && request.method === 'POST' && request.routeOptions.url === url;
    app.addHook('onRequest', (request, _reply, done) => {
      if (ours(request)) this.#stamps.set(request, { side, request: performance.now() });
      done();
    });
    app.addHook('preHandler', (request, _reply, done) => {
      const stamps = this.#stamps.get(request);
      if (stamps !== undefined) stamps.preHandler = performance.now();
      done();
    });
    app.addHook('onResponse', (request, _reply, done) => {
      const stamps = this.#stamps.get(request);
      if (stamps !== undefined && this.#on) this.#record(stamps, performance.now());
      done();
    });
  }

  #record(stamps: Stamps, responded: number): void {
    const { preHandler, start, answered } = stamps;
    if (preHandler === undefined || start === undefined || answered === undefined) return;
    const samples = this.#samples[stamps.side];
    samples.parse.push(preHandler - stamps.request);
    samples.hooks.push(start - preHandler);
    samples.handler.push(answered - start);
    samples.reply.push(responded - answered);
  }

  /**
   * `store` with its `append` timed and its tails' first sight of each record noted; every
   * other member is the store's own.
   */
  logStore(store: LogStore): LogStore {
    const append: LogStore['append'] = async (batch) => {
      if (!this.#on) return store.append(batch);
      const called = performance.now();
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
      const timed: TailOptions = {
        ...options,
        deliver: (record: StoredRecord) => {
          if (this.#on) sight(record);
          return deliver(record);
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
    this.#on = true;
  }

  /** Stops collecting and answers what was collected since `start`. */
  stop(): StageFigures {
    this.#on = false;
    this.#channel.unsubscribe(this.#handlers);
    this.#landed.clear();
    this.#seen.clear();
    const side = (samples: Record<Stage, number[]>) =>
      Object.fromEntries(STAGES.map((stage) => [stage, figure(samples[stage])])) as Record<
        Stage,
        StageFigure
      >;
    return { ours: side(this.#samples.ours), bare: side(this.#samples.bare) };
  }
}
