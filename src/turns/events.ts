/**
 * Landed records as turn-machine events (decisions part B → part C): each record becomes
 * the event named by its kind, carrying its cursor, `at` and the body fields the chart
 * reads. Bodies were checked when they landed (client kinds by the intake's schemas, the
 * service's own by construction), so this reads them without re-validating; a body that
 * lacks a field the chart needs reads as `record.other` and only moves the head.
 *
 * `invoke.completed` names the call it answers by its idem `call:<cause>` (row 8), where
 * the cause is the cursor of the `invoke.allowed` it completes; the machine knows which
 * call each allowed cursor is.
 */
import type { TurnEvent } from '../machines/turn.types.ts';
import { RECORD_KIND_VERSION } from '../schemas/record-kinds.ts';
import type { StoredRecord } from '../storage/log-store.ts';

type Body = Record<string, unknown>;

/** Kinds a client lands that give a session's driver work: the append marks it due. */
const DRIVING_KINDS: ReadonlySet<string> = new Set([
  'message.submitted',
  'turn.cancel',
  'invoke.completed',
]);

/** Whether a batch of these kinds gives the session's driver work (`TurnRuntime.mark`). */
export function drivesTurns(kinds: Iterable<{ readonly name: string }>): boolean {
  for (const kind of kinds) if (DRIVING_KINDS.has(kind.name)) return true;
  return false;
}

const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The cursor a `call:<cause>` idem names, or null. */
export function causeOfIdem(idem: string | null): number | null {
  if (idem?.startsWith('call:') !== true) return null;
  const cause = Number(idem.slice(5));
  return Number.isSafeInteger(cause) && cause > 0 ? cause : null;
}

/** Reads a session's records, in cursor order, as turn-machine events. */
export class RecordReader {
  /** The event of `record`, with its body parsed once. */
  read(record: StoredRecord): { readonly event: TurnEvent; readonly body: Body } {
    const { envelope } = record;
    const landed = { cursor: envelope.cursor, at: envelope.at };
    let body: Body = {};
    try {
      const parsed: unknown = JSON.parse(record.body);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        body = parsed as Body;
    } catch {
      // A body that is not JSON cannot move the turn.
    }
    const event =
      envelope.kind.version === RECORD_KIND_VERSION
        ? this.#event(envelope.kind.name, landed, body, envelope.idem)
        : null;
    // Built only when needed: nearly every record a session lands reads as its own kind.
    return { event: event ?? { ...landed, type: 'record.other' }, body };
  }

  #event(
    name: string,
    landed: { readonly cursor: number; readonly at: number },
    body: Body,
    idem: string | null,
  ): TurnEvent | null {
    const turn = num(body.turn);
    switch (name) {
      case 'session.opened': {
        const executor = body.executor as { name?: unknown } | null | undefined;
        return {
          ...landed,
          type: name,
          rounds: num(body.rounds) ?? 16,
          executor: str(executor?.name) ?? null,
        };
      }
      case 'message.submitted':
        return { ...landed, type: name };
      case 'turn.cancel':
        return { ...landed, type: name, turn };
      case 'turn.started':
        return Array.isArray(body.inputs)
          ? { ...landed, type: name, inputs: body.inputs.filter((c) => typeof c === 'number') }
          : null;
      case 'model.output': {
        const round = num(body.round);
        const usage = body.usage as { input?: unknown; output?: unknown } | undefined;
        if (turn === null || round === null || !Array.isArray(body.tool_calls)) return null;
        const calls = (body.tool_calls as { id?: unknown; name?: unknown }[]).map((c) => ({
          call: str(c.id) ?? '',
          tool: str(c.name) ?? '',
        }));
        return {
          ...landed,
          type: name,
          turn,
          round,
          calls,
          stop: str(body.stop) ?? 'end_turn',
          model: str(body.model) ?? 'unknown',
          usage: { input: num(usage?.input) ?? 0, output: num(usage?.output) ?? 0 },
        };
      }
      case 'inference.failed':
        return turn === null
          ? null
          : {
              ...landed,
              type: name,
              turn,
              retryIn: num(body.retry_in),
              error: str(body.error) ?? '',
            };
      case 'invoke.allowed': {
        const call = str(body.call);
        const target = str(body.target);
        if (turn === null || call === null || target === null) return null;
        return { ...landed, type: name, turn, call, target, timeout: num(body.timeout) ?? 60_000 };
      }
      case 'invoke.denied': {
        const call = str(body.call);
        return turn === null || call === null ? null : { ...landed, type: name, turn, call };
      }
      case 'invoke.completed':
        return { ...landed, type: name, cause: causeOfIdem(idem) };
      case 'compaction.requested':
        return turn === null
          ? null
          : { ...landed, type: name, turn, promptTokens: num(body.prompt_tokens) ?? 0 };
      case 'compaction.completed': {
        const usage = body.usage as { input?: unknown; output?: unknown } | undefined;
        const requested = num(body.requested);
        const through = num(body.through);
        if (requested === null || through === null) return null;
        return {
          ...landed,
          type: name,
          requested,
          through,
          tokensAfter: num(body.tokens_after) ?? 0,
          model: str(body.model) ?? 'simulated',
          usage: { input: num(usage?.input) ?? 0, output: num(usage?.output) ?? 0 },
        };
      }
      case 'turn.ended':
        return turn === null
          ? null
          : { ...landed, type: name, turn, reason: str(body.reason) ?? '' };
      case 'session.archived':
        return { ...landed, type: name };
      default:
        return null;
    }
  }
}
