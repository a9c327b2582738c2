/**
 * A session's status (interface 2.10; decisions rows 34 to 36, 61, part C): whether it is
 * archived, its head (the last landed cursor) and the live turn.
 *
 * `archived` and `head` come from the log store, which is the source of truth for both.
 * `live.phase` comes from the session machine's persisted snapshot: its live substate
 * while the session is open, `ended` once archived (row 61). No turn runner exists yet,
 * so a live session reads `idle` with no turn, no round, no prompt tokens and nothing
 * pending, `since` its open; an archived one reads `ended` since `session.archived`.
 */
import { SESSION_ACTOR } from '../actors/session.actor.ts';
import { NotFound } from '../errors.ts';
import type { SessionPhase } from '../machines/session.machine.ts';
import type { SessionValue } from '../resources/types.ts';
import type { SessionStatus } from '../schemas/sessions.ts';
import type { ControlStore } from '../storage/control-store.ts';
import type { LogStore } from '../storage/log-store.ts';

const LIVE_PHASES: ReadonlySet<string> = new Set([
  'idle',
  'inferring',
  'awaiting_tools',
  'compacting',
]);

/** The phase a persisted session snapshot is in (its `value`), `idle` when it has none. */
export function phaseOf(snapshot: unknown): SessionPhase {
  const value = (snapshot as { value?: unknown } | null)?.value;
  if (value === 'archived') return 'ended';
  if (typeof value === 'object' && value !== null) {
    const live = (value as Record<string, unknown>).live;
    if (typeof live === 'string' && LIVE_PHASES.has(live)) return live as SessionPhase;
  }
  return 'idle';
}

export interface StatusSources {
  readonly logStore: LogStore;
  readonly controlStore: ControlStore;
}

/** 2.10 for `session`. */
export async function sessionStatus(
  sources: StatusSources,
  session: SessionValue,
): Promise<SessionStatus> {
  const [head, snapshot] = await Promise.all([
    sources.logStore.head(session.id),
    sources.controlStore.loadSnapshot(SESSION_ACTOR, session.id),
  ]);
  if (head === null) throw new NotFound('session_not_found', 'no such session');
  const archived = head.archived || session.archived;
  const phase = archived ? 'ended' : phaseOf(snapshot?.snapshot ?? null);
  return {
    archived,
    head: head.head,
    id: session.id,
    live: {
      phase,
      turn: null,
      round: null,
      since: archived ? (session.archivedAt ?? session.opened) : session.opened,
      prompt_tokens: 0,
      pending: [],
    },
  };
}
