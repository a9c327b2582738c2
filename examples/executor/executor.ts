/**
 * The executor's loop: follow the face (step 2), and for every `invoke.allowed` addressed
 * to `executor:<name>` verify its gate (3), claim it (4), perform the tool (5) and
 * complete it under the grant, moving the saved cursor past the call only then (6).
 * Calls are handled one at a time, in log order. A failure the service may recover from
 * (a 5xx, a dropped connection) stops the executor with the cursor before the call: run
 * it again (a supervisor's restart) and it claims the call again.
 */
import type { CryptoKey } from 'jose';
import { gateCheck, type AllowedCall, type GateCheck } from './gate.ts';
import { callService, sessionPath, type Settings } from './service.ts';
import { loadCursor, saveCursor } from './state.ts';
import { followFace, type FaceRecord } from './tail.ts';
import { ExecutorToken } from './token.ts';
import { perform } from './tools.ts';

export interface ExecutorOptions {
  readonly settings: Settings;
  /** The Ed25519 private key whose public half was registered at `POST /sessions`. */
  readonly key: CryptoKey;
  /** Where the cursor is kept across restarts. */
  readonly statePath: string;
  /** Hears what the executor does, one event at a time. */
  readonly log: (event: string, fields: Record<string, unknown>) => void;
  /** Called once a claim has landed, before the call is performed (a test hook). */
  readonly afterClaim?: (cause: number) => void;
  readonly signal: AbortSignal;
}

interface ClaimAnswer {
  readonly attempt: 'first' | 'again' | 'completed';
  readonly credential: string | null;
}

const INVOKE_COMPLETED = { name: 'invoke.completed', version: 1 };

/** Runs until the session is archived or `signal` aborts. */
export async function runExecutor(options: ExecutorOptions): Promise<void> {
  const { settings, statePath, log, signal } = options;
  const token = new ExecutorToken(settings, options.key);
  const checkGate = gateCheck(settings);
  const from = await loadCursor(statePath, settings.session);
  log('started', { session: settings.session, from });
  for await (const record of followFace(settings, token, from, signal)) {
    if (isMine(record, settings.name)) {
      await handle(record, { ...options, token, checkGate });
    }
    await saveCursor(statePath, settings.session, record.envelope.cursor + 1);
  }
  log('stopped', {});
}

const isMine = (record: FaceRecord, name: string): boolean =>
  record.envelope.kind.name === 'invoke.allowed' && record.envelope.to === `executor:${name}`;

async function handle(
  record: FaceRecord,
  options: ExecutorOptions & { token: ExecutorToken; checkGate: GateCheck },
): Promise<void> {
  const { settings, log, token } = options;
  const cursor = record.envelope.cursor;
  const allowed = record.body as unknown as AllowedCall;
  // Step 3: a call whose gate fails is never performed; the service times it out.
  try {
    await options.checkGate(allowed);
  } catch (error) {
    log('gate_refused', { cursor, call: allowed.call, error: String(error) });
    return;
  }
  // Step 4 (2.17): the claim names the invoke.allowed's own cursor.
  const claimPath = sessionPath(settings, '/executor/claim');
  let claimed = await callService(settings, 'POST', claimPath, await token.get(), {
    cause: cursor,
  });
  if (claimed.status === 401) {
    token.renew();
    claimed = await callService(settings, 'POST', claimPath, await token.get(), { cause: cursor });
  }
  if (claimed.status >= 400 && claimed.status < 500) {
    // Not ours to perform (403, 404) or the session is gone (409): nothing to do.
    log('claim_refused', { cursor, status: claimed.status, body: claimed.body });
    return;
  }
  if (claimed.status !== 200) throw new Error(`the claim answered ${claimed.status}`);
  const claim = claimed.body as ClaimAnswer;
  log('claimed', { cursor, call: allowed.call, attempt: claim.attempt });
  if (claim.attempt === 'completed' || claim.credential === null) return;
  options.afterClaim?.(cursor);

  // Step 5: perform, then complete once under the grant; the slot is `call:<cause>`.
  const completion = await perform(allowed.tool, allowed.args);
  const completed = await callService(
    settings,
    'POST',
    sessionPath(settings, '/events'),
    claim.credential,
    [{ kind: INVOKE_COMPLETED, body: completion }],
  );
  if (completed.status === 200) {
    log('completed', { cursor, call: allowed.call, ok: completion.ok });
  } else if (completed.status === 409) {
    // Someone filled the slot first (an earlier run of ours, or the deadline): done.
    log('already_completed', { cursor, call: allowed.call });
  } else {
    // Stop without moving the cursor: a restart claims the call again and retries.
    throw new Error(
      `completing ${allowed.call} answered ${completed.status}: ${JSON.stringify(completed.body)}`,
    );
  }
}
