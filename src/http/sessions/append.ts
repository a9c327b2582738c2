/**
 * `POST /sessions/{id}/events`, the append (interface 4.2, 3.1 row 2, §7; decisions rows
 * 7 to 15, 83, 85, 87, part D): a batch of offered records lands whole, stamped with the
 * producer of the session token, and the answer is the landed envelopes (200; an
 * identical resend answers the same envelopes, 200, and lands nothing).
 *
 * Order (row 83): the body's shape, well formed kinds and the `Idempotency-Key` header
 * (400), more than 100 records (413), the token (401), attach (403 `does_not_attach`), the
 * filter (403 `filter_refused`), the session (404), registered kinds' bodies (400), body
 * sizes (413), and the store's idempotency and archive checks (409).
 *
 * Kept lean, since this is the hot path: a verified token is cached by its text, a
 * session known to exist is remembered per process (sessions are never deleted), and the
 * rest is one log-store call (and, for a message or a cancel, one due mark for the turn
 * runtime first).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Conflict, NotFound } from '../../errors.ts';
import { IdParams } from '../../schemas/common.ts';
import { FilterRefusedProblem, Problem } from '../../schemas/problem.ts';
import { envelopesJson } from '../../schemas/envelope-json.ts';
import { AppendAnswer, AppendBody } from '../../schemas/records.ts';
import { admitRecords, checkBatchSize, landRecords, prepareAppend } from '../../sessions/intake.ts';
import { drivesTurns } from '../../turns/events.ts';
import { completionOf } from './completion.ts';
import { BODY_PROBLEMS, problemResponses } from '../openapi-responses.ts';
import { PROBLEM_MEDIA_TYPE } from '../problem.ts';
import type { SessionContext } from './context.ts';
import { requireAttached, sessionCredential } from './credential.ts';

/** Row 9: 1 to 255 visible ASCII characters. */
const IdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, { error: 'must be 1 to 255 visible ASCII characters' })
  .optional()
  .describe(
    'Scopes the token key to (token key, this value), so one token can write many batches, each idempotent on its own.',
  );

/** Headers are matched loosely: every other header stays as it came. */
const AppendHeaders = z.looseObject({ 'idempotency-key': IdempotencyKey });

/** Sessions this process has seen exist, so only the first append to each reads the log. */
const KNOWN_SESSIONS = 100_000;

/**
 * The store's `idempotency_conflict` said as what the client did. Without
 * the header a token writes one batch (row 9), which surprises a client that sends a second.
 */
function explained(error: unknown, header: string | undefined): unknown {
  if (!(error instanceof Conflict) || error.code !== 'idempotency_conflict') return error;
  const message =
    header === undefined
      ? 'this token already wrote a different batch, and without an Idempotency-Key header a token writes one batch only: send each batch with its own Idempotency-Key (a resend of a batch with the same key is answered, not landed again), or mint a fresh token'
      : 'this token already wrote a different batch under this Idempotency-Key: send each new batch with a new key (a resend of a batch with the same key is answered, not landed again)';
  return new Conflict('idempotency_conflict', message, { cause: error });
}

/** Registers `POST /sessions/{id}/events`. */
export function appendRoute(app: FastifyInstance, context: SessionContext): void {
  const known = new Set<string>();
  const exists = async (id: string): Promise<boolean> => {
    if (known.has(id)) return true;
    if ((await context.logStore.head(id)) === null) return false;
    if (known.size >= KNOWN_SESSIONS) known.clear();
    known.add(id);
    return true;
  };

  /**
   * What the append checks before it lands, in the order of row 83, and the append it
   * makes: every refusal (400, 401, 403, 404, 413) is answered before the due mark is
   * written, so a refused batch writes nothing at all.
   */
  const intake = async (
    request: FastifyRequest,
    session: string,
    body: AppendBody,
    header: string | undefined,
  ) => {
    checkBatchSize(body);
    const credential = await sessionCredential(request, context.tokens, { grants: true });
    const id = requireAttached(credential, session);
    const grant =
      credential.audience === 'grant' ? await completionOf(context, id, credential) : null;
    const batch = admitRecords(
      {
        audience: credential.audience,
        producer: credential.producer,
        scopes: credential.scopes,
        // Row 9: the token key, or (token key, header) when the header scopes it; a
        // grant's key is its call's one completion slot, whatever the header says.
        key:
          header === undefined || grant !== null ? credential.key : `${credential.key}:${header}`,
        ...(credential.cause === undefined ? {} : { cause: credential.cause }),
      },
      body,
      grant?.cause ?? null,
    );
    if (!(await exists(id))) throw new NotFound('session_not_found', 'no such session');
    return { id, grant, append: prepareAppend(grant?.seal, id, batch) };
  };

  app.withTypeProvider<ZodTypeProvider>().post(
    '/sessions/:id/events',
    {
      schema: {
        summary: 'Append records to a session',
        description:
          'Lands the batch atomically, each record stamped with the producer of the token. A principal or console token lands `message.submitted` and `turn.cancel`. Without `Idempotency-Key` a token writes one batch: an identical resend answers the original envelopes, a different one 409 `idempotency_conflict`.',
        tags: ['sessions'],
        security: [{ sessionToken: [] }],
        params: IdParams,
        headers: AppendHeaders,
        body: AppendBody,
        response: {
          200: AppendAnswer,
          ...problemResponses(...BODY_PROBLEMS, 401, 403, 404, 409),
          // Row 85: a refusal names the record, its kind and why.
          403: {
            description:
              'Forbidden. The token does not attach (`does_not_attach`), or the write filter refused a record (`filter_refused`, with `index`, `kind` and `reason`).',
            content: { [PROBLEM_MEDIA_TYPE]: { schema: z.union([FilterRefusedProblem, Problem]) } },
          },
        },
      },
    },
    async (request, reply) => {
      const header = request.headers['idempotency-key'];
      const { id, grant, append } = await intake(request, request.params.id, request.body, header);
      // A message, a cancel or a completion gives the turn runtime work: admitted before
      // it lands (an acknowledged record is driven even if this process dies now), and the
      // driver woken once it landed (see `TurnRuntime.admit` and `landed`).
      const drives = drivesTurns(append.records.map((record) => record.kind));
      const admission = drives ? await context.turns.admit(id) : null;
      let landed;
      try {
        landed = await landRecords(context.logStore, append);
      } catch (error) {
        throw grant === null ? explained(error, header) : error;
      } finally {
        admission?.release();
      }
      if (admission !== null) await context.turns.landed(id, admission);
      // Bound counters and one histogram bucket (`src/metrics/service-metrics.ts`).
      context.metrics.appended(landed.outcome, landed.envelopes.length, reply.elapsedTime / 1000);
      // The answer as `envelopesJson` writes it: the schema's text without re-checking, by
      // zod, envelopes the store has just built (the schema still documents the answer,
      // and the route tests check real answers against the served OpenAPI document). A
      // reply serializer leaves the media type to us: the one Fastify sets for JSON.
      void reply.type('application/json; charset=utf-8').serializer(envelopesJson);
      return [...landed.envelopes];
    },
  );
}
