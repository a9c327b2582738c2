/**
 * A session's status (interface 2.10; decisions rows 34 to 36, 61, part C): whether it is
 * archived, its head (the last landed cursor) and the live turn.
 *
 * `archived` and `head` come from the log store, which is the source of truth for both.
 * `live` comes from the turn machine's state, which is the log replayed (`src/turns`):
 * the phase, the turn in flight and its round, when the phase was entered, the prompt
 * tokens of the last inference or compaction, and the calls allowed and not yet
 * completed. An archived session reads `ended` since `session.archived` (row 61).
 */
import { NotFound } from '../errors.ts';
import type { SessionValue } from '../resources/types.ts';
import type { LiveStatus, SessionStatus } from '../schemas/sessions.ts';
import type { LogStore } from '../storage/log-store.ts';
import type { SessionState } from '../turns/session-state.ts';

export interface StatusSources {
  readonly logStore: LogStore;
  /** The session's turn state, caught up with its log. */
  readonly turns: { state(session: string): Promise<SessionState | null> };
}

/** Row 34 from a turn state. */
function liveOf(state: SessionState): LiveStatus {
  const context = state.context;
  return {
    phase: state.phase,
    turn: context.turn,
    round: context.turn === null ? null : context.round,
    since: context.since,
    prompt_tokens: context.promptTokens,
    // Calls allowed and awaiting their completion; denied calls are answered already.
    pending: context.calls.flatMap((c) =>
      c.state === 'allowed' && c.cause !== null
        ? [{ cursor: c.cause, call: c.call, tool: c.tool }]
        : [],
    ),
  };
}

/** 2.10 for `session`. */
export async function sessionStatus(
  sources: StatusSources,
  session: SessionValue,
): Promise<SessionStatus> {
  const [head, state] = await Promise.all([
    sources.logStore.head(session.id),
    sources.turns.state(session.id),
  ]);
  if (head === null || state === null) throw new NotFound('session_not_found', 'no such session');
  const archived = head.archived || session.archived;
  const live = liveOf(state);
  return {
    archived,
    head: head.head,
    id: session.id,
    live: archived && live.phase !== 'ended' ? { ...live, phase: 'ended' } : live,
  };
}
