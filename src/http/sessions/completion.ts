/**
 * What an append under a grant needs besides the write filter (interface 2.17, decisions
 * rows 17, 57 and part D): the envelope of the call it completes (the filter checks the
 * grant against it), and the sealer that stores the completion's `result` sealed for the
 * session's tenant, marking `truncated` when the result is longer than the call's
 * `result_limit` (the model sees at most that much).
 */
import { canonicalJson } from '../../sessions/canonical-json.ts';
import { sealLayer, tenantSealKey } from '../../sessions/sealing.ts';
import type { BodySealer } from '../../sessions/intake.ts';
import type { SessionCredential } from '../../sessions/tokens.ts';
import type { Envelope } from '../../schemas/records.ts';
import { VENDOR_BOUNDS } from '../../schemas/vendor.ts';
import type { SessionContext } from './context.ts';

export interface GrantedCompletion {
  /** The invoke.allowed the grant is bound to, or null when the session has no such record. */
  readonly cause: Envelope | null;
  readonly seal: BodySealer;
}

/** The cause and sealer of an append under `credential`, a grant. */
export async function completionOf(
  context: SessionContext,
  session: string,
  credential: SessionCredential,
): Promise<GrantedCompletion> {
  const [record] =
    credential.cause === undefined
      ? []
      : await context.logStore.read(session, { from: credential.cause, limit: 1 });
  const cause = record?.envelope.cursor === credential.cause ? record : undefined;
  const allowed = JSON.parse(cause?.body ?? '{}') as { result_limit?: unknown };
  const limit =
    typeof allowed.result_limit === 'number'
      ? allowed.result_limit
      : VENDOR_BOUNDS.defaultResultLimit;
  const key = tenantSealKey(context.sealKey, credential.tenant ?? '');
  const seal: BodySealer = (kind, body) => {
    if (kind.name !== 'invoke.completed' || typeof body !== 'object' || body === null) return body;
    const completed = body as { result?: unknown; truncated?: unknown };
    if (completed.result === null || completed.result === undefined) return body;
    const size = Buffer.byteLength(canonicalJson(completed.result) ?? '', 'utf8');
    return {
      ...completed,
      result: sealLayer(completed.result, key),
      truncated: completed.truncated === true || size > limit,
    };
  };
  return { cause: cause?.envelope ?? null, seal };
}
