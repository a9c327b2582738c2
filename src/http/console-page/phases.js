/* Where the session and turn machines stand, read from the records as they land (the same
 * records the machines take as events, decisions parts B and C), so both charts move with
 * the log for every reader, the plain audit's included. Plain browser JavaScript. */
'use strict';

// A top-level binding of a classic script: session.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsolePhases = (() => {
  /** The session machine's state after `kind` lands (3.1): `none` until the first record. */
  function session(state, kind) {
    if (kind === 'session.archived') return 'archived';
    if (kind === 'session.opened' && state === 'none') return 'live';
    return state;
  }

  /**
   * The turn machine's phase after a record of `kind` with `body` lands (part C); `open` is
   * how many calls of the round still wait for a completion or a denial.
   */
  function turn(phase, kind, body, open) {
    switch (kind) {
      case 'session.opened':
        return 'idle';
      case 'turn.started':
      case 'compaction.completed':
        return 'inferring';
      case 'compaction.requested':
        return 'compacting';
      case 'model.output':
        return Array.isArray(body?.tool_calls) && body.tool_calls.length > 0
          ? 'awaiting_tools'
          : phase;
      case 'invoke.denied':
      case 'invoke.completed':
        // Every call of the round decided: the next round's inference.
        return phase === 'awaiting_tools' && open === 0 ? 'inferring' : phase;
      case 'turn.ended':
        return 'idle';
      case 'session.archived':
        return 'ended';
      default:
        return phase;
    }
  }

  return { session, turn };
})();
