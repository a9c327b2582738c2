/**
 * What every session route file shares, built once per app by `routes.ts`, and the small
 * steps more than one of them takes: the install caller's own session, a session's status
 * as 2.10, and the 2.11 row of a directory entry.
 */
import type { FastifyRequest } from 'fastify';
import type { TokenService } from '../../auth/tokens.ts';
import { NotFound } from '../../errors.ts';
import type { SessionRowValue, SessionValue } from '../../resources/types.ts';
import type { DirectoryRow, SessionStatus } from '../../schemas/sessions.ts';
import type { SessionDirectory } from '../../sessions/directory.ts';
import type { SessionLifecycle } from '../../sessions/lifecycle.ts';
import { sessionOfInstall } from '../../sessions/ownership.ts';
import { sessionStatus } from '../../sessions/status.ts';
import type { SessionTokens } from '../../sessions/tokens.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import type { LogStore } from '../../storage/log-store.ts';
import type { ServiceMetrics } from '../../metrics/service-metrics.ts';
import type { TurnRuntime } from '../../turns/runtime.ts';
import type { ExecutorAccess } from '../../sessions/executors.ts';
import { installCaller } from '../auth/install.ts';

export interface SessionContext {
  /** `BASE_URL` without a trailing slash, for `Link` headers. */
  readonly baseUrl: string;
  readonly logStore: LogStore;
  readonly controlStore: ControlStore;
  /** Verifies console tokens. */
  readonly consoleTokens: TokenService;
  /** Mints and verifies session tokens. */
  readonly tokens: SessionTokens;
  readonly directory: SessionDirectory;
  readonly lifecycle: SessionLifecycle;
  /** The turn runtime: status reads its state; appends that drive turns wake it. */
  readonly turns: TurnRuntime;
  /** The root key the tenants' sealing keys derive from (part D). */
  readonly sealKey: Buffer;
  /** Executor token exchange and claims. */
  readonly executors: ExecutorAccess;
  /** The HMAC key of session ids. */
  readonly idKey: Buffer;
  /** Counts appends and their latency (`GET /metrics`). */
  readonly metrics: ServiceMetrics;
}

/** The session `pathId` names, when the request's install key owns it (else 401/404). */
export async function installSession(
  context: SessionContext,
  request: FastifyRequest,
  pathId: string,
): Promise<SessionValue> {
  const install = await installCaller(request, context.controlStore);
  return sessionOfInstall(context.directory, context.idKey, install.id, pathId);
}

/** 2.10 of a session, re-read from the directory so an archive just made shows. */
export async function statusOf(context: SessionContext, id: string): Promise<SessionStatus> {
  const session = await context.directory.get(id);
  if (session === null) throw new NotFound('session_not_found', 'no such session');
  return sessionStatus(context, session.value);
}

/** Decisions row 37: RFC 3339 UTC. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** 2.11 of a directory row. */
export function directoryRow(row: SessionRowValue): DirectoryRow {
  return {
    archived: row.archived,
    id: row.id,
    opened: rfc3339(row.opened),
    subject: row.subject,
  };
}
