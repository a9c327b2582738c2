/**
 * The executor helper: follows its face of one session, and for every
 * `invoke.allowed` addressed to it verifies the gate against the service's JWKS, claims
 * the call (2.17), runs the handler and completes the call under the grant. The cursor it
 * reports moves past a call only once the call needs nothing more from it, so an executor
 * restarted from the last reported cursor claims again (`again`) what it had not completed.
 */
import { bearer, type Client } from '../client.ts';
import type { components } from '../openapi.ts';
import { ServiceProblem } from '../problem.ts';
import type { LandedRecord, TailEnd } from '../tail.ts';
import { argsDigest } from './jcs.ts';
import { ServiceKeys, verifyJws } from './jws.ts';
import { ExecutorToken, type ExecutorIdentity } from './token.ts';

/** A call the service allowed, as the executor's face serves it (arguments in plain). */
export interface AllowedCall {
  readonly cursor: number;
  readonly cause: number;
  readonly call: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

type CompletedBody = components['schemas']['InvokeCompletedBody'];
/** What a handler answers: an `invoke.completed` body (`truncated` is the service's). */
export type Completion = Pick<CompletedBody, 'ok' | 'result'> &
  Partial<Pick<CompletedBody, 'error'>>;

export interface ExecutorOptions extends ExecutorIdentity {
  /** Performs one call; a thrown error completes it with `ok: false`. */
  readonly handle: (call: AllowedCall) => Promise<Completion>;
  /** First cursor to read: the last one `onCursor` reported, 1 for a new executor. */
  readonly from?: number;
  /** Reports the cursor to resume from; keep it to restart where this run stopped. */
  readonly onCursor?: (next: number) => void | Promise<void>;
  /** Hears what the executor does. */
  readonly onEvent?: (event: string, fields: Record<string, unknown>) => void;
  /** Called once a claim has landed, before the handler runs. */
  readonly afterClaim?: (call: AllowedCall) => void | Promise<void>;
  readonly signal?: AbortSignal;
}

/** The body of an `invoke.allowed` (what `verifyGate` checks). */
export type Allowed = components['schemas']['InvokeAllowedBody'];
const INVOKE_COMPLETED = { name: 'invoke.completed', version: 1 };

/** Runs until the session is archived or `signal` aborts; answers why it stopped. */
export async function runExecutor(client: Client, options: ExecutorOptions): Promise<TailEnd> {
  const token = new ExecutorToken(client, options);
  const keys = new ServiceKeys(client);
  const log = options.onEvent ?? (() => undefined);
  let next = options.from ?? 1;
  for (;;) {
    const tail = client
      .session({ session: options.session, token: await token.get() })
      .tail({ from: next, ...(options.signal === undefined ? {} : { signal: options.signal }) });
    for (;;) {
      const step = await tail.next().catch((error: unknown) => {
        // The token lapsed between two connections of the tail: a fresh one reads on.
        if (error instanceof ServiceProblem && error.status === 401) return null;
        throw error;
      });
      if (step === null) {
        token.renew();
        break;
      }
      if (step.done === true) {
        // Decisions row 68: the tail ends with the token; a fresh one reads on.
        if (step.value !== 'token_expired') return step.value;
        token.renew();
        break;
      }
      const record = step.value;
      if (isMine(record, options.name))
        await perform(client, record, { ...options, token, keys, log });
      next = record.envelope.cursor + 1;
      await options.onCursor?.(next);
    }
  }
}

const isMine = (record: LandedRecord, name: string): boolean =>
  record.envelope.kind.name === 'invoke.allowed' && record.envelope.to === `executor:${name}`;

interface Context extends ExecutorOptions {
  readonly token: ExecutorToken;
  readonly keys: ServiceKeys;
  readonly log: (event: string, fields: Record<string, unknown>) => void;
}

/**
 * Verifies offline that the service allowed exactly this call: the `gate` of an
 * `invoke.allowed` body verifies against the service's keys and pins the session, the
 * cause, the call, the tool and the digest of the arguments. Throws otherwise.
 */
export async function verifyGate(keys: ServiceKeys, session: string, body: Allowed): Promise<void> {
  if (body.gate === undefined) throw new Error('the call carries no gate');
  const claims = await verifyJws(body.gate, keys, 'gate+jwt');
  const ours: Record<string, unknown> = {
    sid: session,
    cause: body.cause,
    call: body.call,
    tool: body.tool,
    args_digest: await argsDigest(body.args),
  };
  for (const [claim, value] of Object.entries(ours)) {
    if (claims[claim] !== value) throw new Error(`the gate's ${claim} is not this call's`);
  }
}

async function perform(client: Client, record: LandedRecord, context: Context): Promise<void> {
  const body = record.body as Allowed;
  const cursor = record.envelope.cursor;
  const call: AllowedCall = {
    cursor,
    cause: body.cause,
    call: body.call,
    tool: body.tool,
    args: body.args,
  };
  try {
    await verifyGate(context.keys, context.session, body);
  } catch (error) {
    // A call whose gate fails is never performed; the service times it out.
    context.log('gate_refused', { cursor, call: call.call, error: String(error) });
    return;
  }
  const claim = async () =>
    client.api.POST('/sessions/{id}/executor/claim', {
      params: { path: { id: context.session } },
      body: { cause: cursor },
      headers: bearer(await context.token.get()),
    });
  let answer;
  try {
    answer = await claim().catch(async (error: unknown) => {
      if (!(error instanceof ServiceProblem) || error.status !== 401) throw error;
      context.token.renew();
      return claim();
    });
  } catch (error) {
    // Not this executor's to perform (403, 404) or the session ended (409).
    if (!(error instanceof ServiceProblem) || error.status >= 500) throw error;
    context.log('claim_refused', { cursor, status: error.status, code: error.code });
    return;
  }
  const granted = answer.data;
  if (granted === undefined) throw new Error('the claim answered empty');
  context.log('claimed', { cursor, call: call.call, attempt: granted.attempt });
  if (granted.attempt === 'completed' || granted.credential === null) return;
  await context.afterClaim?.(call);
  const completion = await context.handle(call).catch((error: unknown): Completion => ({
    ok: false,
    result: null,
    error: error instanceof Error ? error.message : 'failed',
  }));
  try {
    await client.api.POST('/sessions/{id}/events', {
      params: { path: { id: context.session } },
      body: [{ kind: INVOKE_COMPLETED, body: completion }],
      headers: bearer(granted.credential),
    });
    context.log('completed', { cursor, call: call.call, ok: completion.ok });
  } catch (error) {
    // The slot `call:<cause>` is filled already (an earlier run of ours, or the deadline).
    if (!(error instanceof ServiceProblem) || error.status !== 409) throw error;
    context.log('already_completed', { cursor, call: call.call });
  }
}
