/**
 * Problems as typed errors: every answer outside 2xx becomes one
 * `ServiceProblem` carrying the RFC 9457 body the service sends (`status`, `code`,
 * `title`, `message`, `field`, `reason`, `errors` and the extension members).
 */
import type { components } from './openapi.ts';

/**
 * A problem's code: one of the service's catalog (`ErrorCode` of the document), or
 * `http_<status>` for an answer that carried no problem body (a proxy's error page).
 */
export type ProblemCode = components['schemas']['ErrorCode'] | `http_${number}`;

/** The problem body the service answers with (`application/problem+json`). */
export type ProblemBody = Omit<components['schemas']['Problem'], 'code'> & {
  readonly code: ProblemCode;
} & Readonly<Record<string, unknown>>;

/** One failed field of a request. */
export type FieldError = components['schemas']['FieldError'];

/** A refusal of the service: one class for every status, told apart by `code`. */
export class ServiceProblem extends Error {
  override readonly name = 'ServiceProblem';
  /** The HTTP status. */
  readonly status: number;
  /** The stable snake_case code, e.g. `session_archived`, `rate_limited`. */
  readonly code: ProblemCode;
  /** The HTTP status phrase. */
  readonly title: string;
  /** The field at fault, when one is. */
  readonly field: string | undefined;
  /** Why the field was refused. */
  readonly reason: string | undefined;
  /** Every failed field, when several failed. */
  readonly errors: readonly FieldError[];
  /** The whole body, extension members included (e.g. `error` of a consent poll). */
  readonly body: ProblemBody;

  constructor(body: ProblemBody) {
    super(body.message);
    this.status = body.status;
    this.code = body.code;
    this.title = body.title;
    this.field = body.field;
    this.reason = body.reason;
    this.errors = body.errors ?? [];
    this.body = body;
  }

  /**
   * The problem an answer carries. An answer that is not a problem body (a proxy's error
   * page, an empty body) is described from its status, with the code `http_<status>`.
   */
  static async of(response: Response): Promise<ServiceProblem> {
    const text = await response.text().catch(() => '');
    const parsed = parseProblem(text);
    if (parsed !== undefined) return new ServiceProblem(parsed);
    const title = response.statusText === '' ? `HTTP ${response.status}` : response.statusText;
    const detail = text === '' ? title : text.slice(0, 500);
    return new ServiceProblem({
      type: 'about:blank',
      title,
      status: response.status,
      detail,
      code: `http_${response.status}`,
      message: detail,
    });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseProblem(text: string): ProblemBody | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const { status, code, message } = value;
  if (typeof status !== 'number' || typeof code !== 'string' || typeof message !== 'string')
    return undefined;
  return value as ProblemBody;
}
