/**
 * What an executor does with a session (interface 4.2, 2.9, 2.17; decisions rows 57, 62,
 * 65, 66 and part D): exchange a signed assertion for a session token that reads its face
 * and claims, and claim the calls addressed to it, each claim answered by the claim actor
 * (`src/actors/claim.actor.ts`) and, while the call is unanswered, with a grant.
 *
 * A claim names a cause (the cursor of an `invoke.allowed`). One the token is not shown
 * (no such record, or one addressed elsewhere) is 404; one shown but not this executor's
 * `invoke.allowed` is 403; a token that is not an executor's is 403.
 */
import { randomUUID } from 'node:crypto';
import type { ActorHost } from '../actors/actor-host.ts';
import { claimActor, claimActorId } from '../actors/claim.actor.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFound, Unauthenticated } from '../errors.ts';
import type { CompletedBy } from '../machines/claim.machine.ts';
import type { ClaimAnswer, ExecutorSpec } from '../schemas/executor.ts';
import type { SessionAnswer } from '../schemas/sessions.ts';
import type { LogStore, StoredRecord } from '../storage/log-store.ts';
import type { WorkStore } from '../storage/work-store.ts';
import type { SessionDirectory } from './directory.ts';
import { verifyAssertion } from './executor-assertion.ts';
import type { SessionCredential, SessionTokens } from './tokens.ts';
import { completionIdem } from './write-filter.ts';

/** Row 65: what the executor's session token may do. */
const EXECUTOR_SCOPES = ['read', 'claim'] as const;
/** Records read per page while looking for a call's completion. */
const PAGE = 500;

export interface ExecutorAccessOptions {
  readonly log: LogStore;
  readonly host: ActorHost;
  readonly tokens: SessionTokens;
  readonly directory: SessionDirectory;
  /** Remembers assertion `jti`s until they expire (row 65: each is used once). */
  readonly work: WorkStore;
  readonly clock: Clock;
  /** `BASE_URL` without a trailing slash: assertions name the endpoint under it. */
  readonly baseUrl: string;
}

function bodyOf(record: StoredRecord): Record<string, unknown> {
  const parsed: unknown = JSON.parse(record.body);
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

function completedBy(producer: string): CompletedBy {
  if (producer.startsWith('executor:')) return 'executor';
  return producer === 'service:mcp' ? 'mcp' : 'service';
}

export class ExecutorAccess {
  readonly #options: ExecutorAccessOptions;
  readonly #claims;

  constructor(options: ExecutorAccessOptions) {
    this.#options = options;
    this.#claims = claimActor(options.log);
  }

  /** `GET /sessions/{id}/executor/token`: the executor's session token for `assertion`. */
  async token(session: string, assertion: string): Promise<SessionAnswer> {
    const { log, directory, work, clock, tokens } = this.#options;
    const [opened] = await log.read(session, { from: 1, limit: 1 });
    const row = await directory.get(session);
    if (opened === undefined || row === null)
      throw new NotFound('session_not_found', 'no such session');
    const executor = bodyOf(opened).executor as ExecutorSpec | null | undefined;
    if (executor === null || executor === undefined) {
      throw new Unauthenticated('the session registered no executor', true);
    }
    await verifyAssertion(assertion, {
      executor,
      audience: `${this.#options.baseUrl}/sessions/${session}/executor/token`,
      now: clock.now(),
      // A lease nobody else can hold: taken only if no one recorded this jti before.
      once: (jti, until) =>
        work.acquireLease(
          `jti:${session}:${jti}`,
          randomUUID(),
          clock.now(),
          until - clock.now() + 60_000,
        ),
    });
    const minted = await tokens.mint({
      session,
      producer: `executor:${executor.name}`,
      tenant: row.value.tenant,
      scopes: [...EXECUTOR_SCOPES],
    });
    return { session, token: minted.token, expires: minted.expires };
  }

  /** `POST /sessions/{id}/executor/claim {cause}` (2.17). */
  async claim(session: string, credential: SessionCredential, cause: number): Promise<ClaimAnswer> {
    const producer = credential.producer;
    if (!producer.startsWith('executor:') || credential.audience !== 'session') {
      throw new Forbidden('not_executor', 'only an executor token claims calls');
    }
    if (!credential.scopes.has('claim')) {
      throw new Forbidden('insufficient_scope', 'the token may not claim');
    }
    const [record] = await this.#options.log.read(session, { from: cause, limit: 1 });
    const shown =
      record?.envelope.cursor === cause &&
      (record.envelope.to === null || record.envelope.to === producer);
    if (record === undefined || !shown) {
      throw new NotFound('cause_not_found', `no record ${String(cause)} this token is shown`);
    }
    if (record.envelope.kind.name !== 'invoke.allowed' || record.envelope.to !== producer) {
      throw new Forbidden(
        'not_your_call',
        `record ${String(cause)} is not an invoke.allowed addressed to ${producer}`,
      );
    }
    const body = bodyOf(record);
    const timeout = typeof body.timeout === 'number' ? body.timeout : 60_000;
    const id = claimActorId(session, cause);
    const { host } = this.#options;
    const completion = await this.#completion(session, cause);
    if (completion !== null) {
      await host.send(this.#claims, id, {
        type: 'call.completed',
        by: completedBy(completion.envelope.producer),
      });
    }
    const outcome = await host.send(this.#claims, id, {
      type: 'claim.requested',
      executor: producer.slice('executor:'.length),
      addressed: true,
      call: {
        cause,
        call: typeof body.call === 'string' ? body.call : '',
        timeout,
        deadline: record.envelope.at + timeout,
      },
    });
    if (outcome === null || outcome.outcome === 'forbidden') {
      throw new Forbidden(
        'not_your_call',
        `record ${String(cause)} is not addressed to ${producer}`,
      );
    }
    if (outcome.outcome === 'completed')
      return { attempt: 'completed', credential: null, expires: null };
    const grant = await this.#options.tokens.mintGrant({
      session,
      producer,
      tenant: credential.tenant ?? '',
      cause,
      expires: outcome.expires,
    });
    return { attempt: outcome.attempt, credential: grant.token, expires: grant.expires };
  }

  /** The completion of the call `cause` allowed, if one landed. */
  async #completion(session: string, cause: number): Promise<StoredRecord | null> {
    const idem = completionIdem(cause);
    for (let from = cause + 1; ;) {
      const records = await this.#options.log.read(session, { from, limit: PAGE });
      const found = records.find((r) => r.envelope.idem === idem);
      if (found !== undefined) return found;
      if (records.length < PAGE) return null;
      from = (records.at(-1)?.envelope.cursor ?? from) + 1;
    }
  }
}
