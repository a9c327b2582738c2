/**
 * The service's pino logger, with every credential redacted wherever it appears.
 *
 * Redaction is by path (headers, body fields that carry secrets) and, for URLs, by
 * query parameter: a WebSocket tail may carry its token as `access_token` (decisions
 * row 3), so the request serializer rewrites the URL before it is logged.
 */
import { pino, type Logger, type DestinationStream, type LevelWithSilent } from 'pino';

/** Field names whose values are secret in any object the service logs. */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'set-cookie',
  'sec-websocket-protocol',
  'token',
  'key',
  'poll_secret',
  'value',
  'secret',
  'subject_token',
  'access_token',
  'refresh_token',
  'id_token',
  'code_verifier',
  'client_secret',
  'password',
  'operatorToken',
  'signingKey',
  'secretsKey',
] as const;

/** Query parameters scrubbed from logged URLs. */
const SECRET_QUERY = new Set(['access_token', 'token', 'code', 'state', 'poll_secret', 'key']);

const REDACT_PATHS = [
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]),
  ...SECRET_FIELDS.map((field) => `req.headers["${field}"]`),
  ...SECRET_FIELDS.map((field) => `res.headers["${field}"]`),
];

/** Replaces the values of secret query parameters in a request URL. */
export function scrubUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const params = new URLSearchParams(url.slice(mark + 1));
  let changed = false;
  for (const name of [...params.keys()]) {
    if (SECRET_QUERY.has(name.toLowerCase())) {
      params.set(name, '[Redacted]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, mark)}?${params.toString()}` : url;
}

export interface LoggerOptions {
  readonly level: LevelWithSilent;
  /** Where lines go; defaults to `batchedDestination(1)`, standard output. Tests pass a capture stream. */
  readonly destination?: DestinationStream;
}

/** Bytes of log lines gathered before a write, and the longest a line waits for one. */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_MS = 100;

/**
 * Where the service's lines go: a file descriptor or path, written asynchronously in
 * batches of up to 4 KiB, and at least every 100 ms, instead of one write per line. pino's
 * default (`minLength: 0`) hands every line to the libuv thread pool on its own: with a
 * line per request that was about 10 µs of CPU per request, on the append path
 * (`npm run bench`). A line is at most 100 ms late; pino flushes what is left when the
 * process exits.
 */
export function batchedDestination(dest: number | string): DestinationStream {
  return pino.destination({
    dest,
    sync: false,
    minLength: LOG_BATCH_BYTES,
    periodicFlush: LOG_FLUSH_MS,
  });
}

/** Builds the one logger of a process. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      base: { service: 'agent-session-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? batchedDestination(1),
  );
}
