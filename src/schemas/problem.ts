/**
 * Error bodies: RFC 9457 problems with `code`, `message`, `field`, `reason` and
 * `errors` (decisions rows 59, 82), and the extension members the interface and the
 * decisions document (2.18, rows 30, 47, 78, 85, 92). These describe answers only;
 * `src/http/problem.ts` builds the bodies.
 */
import { z } from 'zod';
import { ERROR_CODES, ERROR_CODE_NAMES } from '../error-codes.ts';
import { Millis, OpaqueId } from './common.ts';
import { Kind } from './records.ts';

/**
 * One failed field: a dotted path from the request part (`body.tools.3.name`) and why.
 * The one shape of a failed field, in problem bodies and wherever a check collects them.
 */
export const FieldError = z
  .object({
    field: z.string().describe('Dotted path from the request part, e.g. `body.tools.3.name`.'),
    reason: z.string().describe('Why the field was refused.'),
  })
  .meta({ id: 'FieldError', description: 'One failed field of a request.' });
export type FieldError = z.infer<typeof FieldError>;

/** The catalog as the `code` member's description: one row per code, its status and meaning. */
const CODE_TABLE = [
  'A stable snake_case code from the catalog below; the status is always the one listed.',
  '',
  '| code | status | meaning |',
  '|---|---|---|',
  ...ERROR_CODE_NAMES.map((code) => {
    const { status, meaning } = ERROR_CODES[code];
    return `| \`${code}\` | ${status} | ${meaning.replaceAll('|', '\\|')} |`;
  }),
].join('\n');

/** Every code a problem can carry (`src/error-codes.ts`), one component with its table. */
const ErrorCode = z.enum(ERROR_CODE_NAMES).meta({ id: 'ErrorCode', description: CODE_TABLE });

const problemShape = {
  type: z
    .string()
    .describe('A URI naming the problem type; `about:blank` when the code says it all.'),
  title: z.string().describe('The HTTP status phrase.'),
  status: z.int().min(100).max(599),
  detail: z.string().describe('What went wrong, for a human.'),
  instance: z.string().optional().describe('The request path.'),
  code: ErrorCode,
  message: z.string().describe('Same as `detail`.'),
  field: z.string().optional().describe('The field at fault, when one is.'),
  reason: z.string().optional().describe('Why the field was refused.'),
  errors: z.array(FieldError).optional().describe('Every failed field, when several failed.'),
};

/** Decisions row 82: the body of every error answer (`application/problem+json`). */
export const Problem = z.object(problemShape).meta({
  id: 'Problem',
  description: 'An RFC 9457 problem with a stable `code`.',
});
export type Problem = z.infer<typeof Problem>;

/** A problem with extension members beside the standard ones (row 59). */
function problemWith<T extends z.core.$ZodLooseShape>(
  id: string,
  description: string,
  extension: T,
) {
  return z.object({ ...problemShape, ...extension }).meta({ id, description });
}

/** 2.18: `DELETE /secrets/{id}` refused while options or connections still name the secret. */
export const SecretInUseProblem = problemWith(
  'SecretInUseProblem',
  'The secret is still referenced.',
  {
    connections: z.array(z.string()).describe('Connections that send the secret.'),
    inferences: z.array(z.string()).describe('Inference options that name the secret.'),
  },
);
export type SecretInUseProblem = z.infer<typeof SecretInUseProblem>;

/**
 * 2.18 and decisions row 78: `DELETE /inferences/{id}` or `DELETE /connections/{id}`
 * refused while installs still name the option or connection.
 */
export const InUseByInstallsProblem = problemWith(
  'InUseByInstallsProblem',
  'Installs still reference the resource; `installs` names them.',
  { installs: z.array(OpaqueId).describe('The installs that reference it.') },
);
export type InUseByInstallsProblem = z.infer<typeof InUseByInstallsProblem>;

/** Decisions row 85: the write filter refused a record; the batch landed nothing. */
export const FilterRefusedProblem = problemWith(
  'FilterRefusedProblem',
  'The write filter refused a record of the batch; nothing of the batch landed.',
  {
    index: z.int().min(0).describe('Index of the refused record in the batch.'),
    kind: Kind,
    reason: z.string().describe('Why the filter refused it.'),
  },
);
export type FilterRefusedProblem = z.infer<typeof FilterRefusedProblem>;

/** Decisions row 92: a request consented to again. */
export const AlreadyGrantedProblem = problemWith(
  'AlreadyGrantedProblem',
  'The request was granted already; `install` is the install the grant created or kept.',
  { install: OpaqueId.describe('The install the grant created or kept.') },
);
export type AlreadyGrantedProblem = z.infer<typeof AlreadyGrantedProblem>;

/** Decisions row 47: a connected MCP catalog differs from the one kept at link time. */
export const CatalogChangedProblem = problemWith(
  'CatalogChangedProblem',
  'A connected MCP catalog changed since it was linked; the session does not open.',
  { connections: z.array(z.string()).describe('Connections whose catalog changed.') },
);
export type CatalogChangedProblem = z.infer<typeof CatalogChangedProblem>;

/**
 * Decisions row 30, RFC 8628 §3.5: why a poll has no receipt yet (`authorization_pending`,
 * `slow_down`), or will never have one (`expired_token`, `access_denied`: an owner declined).
 */
export const PollError = z.enum([
  'authorization_pending',
  'slow_down',
  'expired_token',
  'access_denied',
]);
export type PollError = z.infer<typeof PollError>;

/** Decisions row 30: a 400 to a poll; `slow_down` carries the raised interval. */
export const PollProblem = problemWith(
  'PollProblem',
  'Why a poll has no receipt yet (`authorization_pending`; `slow_down`: poll at `interval` from now on) or never will (`expired_token`; `access_denied`: an owner declined).',
  {
    error: PollError,
    interval: Millis.optional().describe(
      'The interval to poll at from now on, in ms (`slow_down`).',
    ),
  },
);
export type PollProblem = z.infer<typeof PollProblem>;
