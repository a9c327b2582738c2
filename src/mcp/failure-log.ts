/**
 * What the log keeps of a failed exchange with a tenant's MCP server.
 *
 * The warn line holds our own words only: which endpoint and request, the step, the HTTP
 * status, the socket error and the kinds of error raised. Never the server's body or
 * error text: a tenant's server may put anything there, its users' data included, or echo
 * a credential back. What it said goes to the debug level alone (`LOG_LEVEL=debug`),
 * scrubbed of known secrets and of anything shaped like a credential, and cut short.
 */
import { inspect } from 'node:util';
import type { Egress } from '../net/egress.ts';

/** Our own description of a failed exchange (`failures.ts` fills it in). */
export interface FailureFacts {
  readonly endpoint: string;
  /** The problem code the caller was answered with. */
  readonly code: string;
  /** Which request of the exchange failed, in our words. */
  readonly step: string;
  /** `METHOD url` of the last request. */
  readonly request?: string;
  /** The HTTP status of its answer, when there was one. */
  readonly status?: number;
  /** The socket error's code, when the connection failed. */
  readonly errno?: string;
}

/** Logs a failure: the facts at warn, what the server said at debug. */
export function logFailure(
  egress: Egress,
  facts: FailureFacts,
  error: unknown,
  secrets: readonly string[],
): void {
  egress.report({ upstream: { ...facts, errors: kinds(error) } }, 'MCP server exchange failed');
  egress.said(
    { upstream: { endpoint: facts.endpoint, said: scrub(describe(error), secrets) } },
    'what the failing MCP server said',
  );
}

/** The names of the errors in a failure's chain (`StreamableHTTPError`, `TypeError`…). */
function kinds(error: unknown): string[] {
  const names: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    // The class, not `name`: the SDK's errors keep the name `Error`.
    names.push(current.constructor.name);
    current = current.cause;
  }
  return names;
}

/** The whole chain of messages, for the debug log only. */
function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined; depth += 1) {
    parts.push(current instanceof Error ? `${current.name}: ${current.message}` : inspect(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(' <- ');
}

const CREDENTIAL_FIELDS =
  /((?:access|refresh|id)_token|client_secret|code_verifier|assertion|password|"code"|\bcode)(["']?\s*[:=]\s*["']?)[^"'&\s,}]+/gi;

/**
 * What a server said, fit for the debug log: known secrets and anything shaped like a
 * credential (a bearer, a token field) replaced, and cut to 500 characters.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.replaceAll(secret, '[Redacted]');
  return out
    .replace(/(bearer\s+)[A-Za-z0-9\-._~+/]+=*/gi, '$1[Redacted]')
    .replace(CREDENTIAL_FIELDS, '$1$2[Redacted]')
    .slice(0, 500);
}
