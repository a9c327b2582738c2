/**
 * `GET /console/sessions/{id}/events` (interface 4.3, 5 rule 4, 7; decisions rows 7 and
 * 70): the audit read of a session, JSON lines with key `Ok` only, from cursor 1 to the
 * head as it stood when the read began.
 *
 * Plain (`opened` absent or `0`): any member of the tenant; the public records, sealed
 * layers as digest and size. Opened (`opened=1`): owners only, and only once the session
 * has ended (archived; still live is 409); every record, addressed ones included, each
 * sealed layer opened under the tenant's key or `{unreadable: {…, error}}` saying why,
 * and the authorizer's `gate` stripped from invoke.allowed. A session the caller's tenant
 * does not hold, or an id that names none, is 404.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { Conflict, NotFound } from '../../errors.ts';
import { IdParams, parseStreamId } from '../../schemas/common.ts';
import { AuditQuery, LandedRecord, type TailLine } from '../../schemas/records.ts';
import type { SessionDirectory } from '../../sessions/directory.ts';
import { present, type Face } from '../../sessions/faces.ts';
import { tenantSealKey } from '../../sessions/sealing.ts';
import type { LogStore } from '../../storage/log-store.ts';
import {
  consoleCaller,
  requireMember,
  requireOwner,
  type ConsoleAuthDeps,
} from '../../console/caller.ts';
import { problemResponses } from '../openapi-responses.ts';
import { TAIL_LIMITS, type TailLimits } from './limits.ts';
import { jsonStreamAnswer, writeJsonLines } from './ndjson.ts';

/** Records read from the log per page: what one audit holds in memory at most. */
const PAGE = 100;

export interface AuditDeps extends ConsoleAuthDeps {
  readonly logStore: LogStore;
  /** The process's session directory (`src/services.ts`). */
  readonly directory: SessionDirectory;
  /** The root key tenant sealing keys derive from. */
  readonly sealKey: Buffer;
  /** Aborted when the process stops: a long audit ends early. */
  readonly shutdown: AbortSignal;
  /** A reader that leaves `bufferBytes` unread for `lagMs` is dropped. */
  readonly tailLimits?: Pick<TailLimits, 'bufferBytes' | 'lagMs'> | undefined;
}

const AuditLine = z
  .object({ Ok: LandedRecord })
  .meta({ id: 'AuditLine', description: 'One JSON line of the audit: key `Ok`.' });

const DESCRIPTION = `Console token. The session's records from cursor 1 to its head when the read began, as JSON lines (\`application/jsonstream\`), each \`{"Ok": record}\`.

Plain (\`opened\` absent or \`0\`, any member): the public records, call arguments and tool results as \`{"sealed": {"digest", "size"}}\`. Opened (\`opened=1\`, owners only, ended sessions only: a live one answers 409): every record, addressed ones included, arguments and results opened, or \`{"unreadable": {"digest", "size", "error"}}\` saying why not; invoke.allowed is served without its \`gate\`.`;

/** The audit's lines: Ok only, a record a face cannot read served as `{unreadable}`. */
async function* auditLines(
  log: LogStore,
  stream: string,
  head: number,
  face: Face,
  stop: AbortSignal,
): AsyncGenerator<TailLine, void> {
  for (let from = 1; from <= head && !stop.aborted;) {
    const records = await log.read(stream, { from, to: head + 1, limit: PAGE });
    if (records.length === 0) return;
    for (const record of records) {
      const line = present(record, face);
      if (line === null) continue;
      yield 'Ok' in line
        ? line
        : { Ok: { envelope: record.envelope, body: { unreadable: { error: line.Err.message } } } };
    }
    from = (records.at(-1)?.envelope.cursor ?? head) + 1;
  }
}

/** Registers the console audit read. */
export function auditRoutes(app: FastifyInstance, deps: AuditDeps): void {
  const { directory } = deps;

  app.withTypeProvider<ZodTypeProvider>().get(
    '/console/sessions/:id/events',
    {
      schema: {
        summary: "Audit a session's records (plain or opened face)",
        description: DESCRIPTION,
        tags: ['console'],
        security: [{ consoleToken: [] }],
        params: IdParams,
        querystring: AuditQuery,
        response: {
          200: jsonStreamAnswer(AuditLine, 'The records, one JSON line each.'),
          ...problemResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const member = requireMember(await consoleCaller(request, deps));
      const opened = request.query.opened === '1';
      const caller = opened ? requireOwner(member) : member;
      const stream = parseStreamId(request.params.id);
      const session = stream === null ? null : await directory.get(stream);
      if (stream === null || session?.value.tenant !== caller.tenant) {
        throw new NotFound('session_not_found', 'no such session under this tenant');
      }
      const head = await deps.logStore.head(stream);
      if (opened && head?.archived !== true) {
        throw new Conflict(
          'session_live',
          'the session is still live; the opened face is served once it has ended',
        );
      }
      const key = tenantSealKey(deps.sealKey, caller.tenant);
      const face: Face = opened ? { kind: 'opened', key } : { kind: 'public', key };
      const gone = new AbortController();
      reply.raw.once('close', () => {
        gone.abort();
      });
      const stop = AbortSignal.any([gone.signal, deps.shutdown]);
      const limits = deps.tailLimits ?? TAIL_LIMITS;
      try {
        await writeJsonLines(
          reply,
          auditLines(deps.logStore, stream, head?.head ?? 0, face, stop),
          deps.shutdown,
          // A reader that stops reading is dropped once it lags (the connection closes).
          { buffer: { bufferBytes: limits.bufferBytes, lagMs: limits.lagMs } },
        );
      } catch (error) {
        request.log.error({ err: error }, 'audit read failed');
        reply.raw.destroy();
      }
    },
  );
}
