/**
 * One log line per request, with its request id. Fastify's own request
 * logging (two lines, raw URL) is off; this hook writes the line once the answer is sent,
 * with secret query parameters scrubbed from the URL and no headers at all.
 *
 * The line is written through a child of the app's logger with path redaction off. Its
 * fields are fixed here and none can hold a credential (the URL is scrubbed first), and
 * pino's redaction, with the wildcard paths of `src/logger.ts`, runs every field of
 * every line through the redactor: on the append path it was a fifth of the server's
 * time (`npm run bench`). Every other line, request errors included, is still redacted.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino';
import { scrubUrl } from '../logger.ts';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fastify `genReqId`: a caller's well-formed `X-Request-Id`, or a fresh UUID. Node builds
 * a UUID's text by joining 21 strings, which V8 keeps as a tree of 20 joins (about 670
 * bytes) until something flattens it; the id lives as long as its request, hours for a
 * tail (`docs/benchmarks.md`, "Open tails"), so it is copied once into one flat string.
 */
export function requestId(request: { headers: Record<string, string | string[] | undefined> }) {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given)
    ? given
    : Buffer.from(randomUUID(), 'latin1').toString('latin1');
}

type LogArgs = Parameters<LogFn>;

/** Child options that change nothing of the parent's. */
const SAME: ChildLoggerOptions = {};

/**
 * The logger of one request (`request.log`), made only when something logs through it.
 * Fastify makes one per request, and a pino child runs its bindings (the request id)
 * through the redaction of `src/logger.ts`: about 8 µs, on every request, for a logger
 * that only errors use (`npm run bench`). Once made it is the child Fastify would have
 * made, with the same bindings and options.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    // Fastify makes the options anew for each request; those that change nothing are not
    // kept, since a long-lived request (a tail) holds its logger for as long as it lasts.
    this.#options =
      options.serializers === undefined && options.level === parent.level ? SAME : options;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#real().level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  fatal(...args: LogArgs): void {
    this.#real().fatal(...args);
  }

  error(...args: LogArgs): void {
    this.#real().error(...args);
  }

  warn(...args: LogArgs): void {
    this.#real().warn(...args);
  }

  info(...args: LogArgs): void {
    this.#real().info(...args);
  }

  debug(...args: LogArgs): void {
    this.#real().debug(...args);
  }

  trace(...args: LogArgs): void {
    this.#real().trace(...args);
  }

  silent(...args: LogArgs): void {
    this.#real().silent(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/**
 * Installs the per-request log line and the lazy per-request logger, and echoes the
 * request id on every answer. Call it before any route is added: a route keeps the
 * child logger factory in force when it is added.
 */
export function installRequestLog(app: FastifyInstance): void {
  app.setChildLoggerFactory(
    (parent, bindings, options) => new LazyRequestLogger(parent, bindings, options),
  );
  // Made once: a child with its own redaction compiles it on creation.
  const lines = app.log.child({}, { redact: [] });
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    lines.info(
      {
        // What Fastify's per-request child logger binds, so the line reads as before.
        reqId: request.id,
        method: request.method,
        url: scrubUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        ip: request.ip,
      },
      'request',
    );
    done();
  });
}
