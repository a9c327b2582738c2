/**
 * Saved turn states: a session's `SessionState` at some cursor, kept in the work store so
 * that taking a long session up costs the records after the save, not the whole log.
 *
 * A saved state is a cache of what replaying the log from cursor 1 gives (the property
 * test in test/turns/replay.test.ts holds both to the same snapshot and prompt), so
 * losing one, or refusing one, costs only time: the state is rebuilt from cursor 1.
 * One is refused when it was written by another layout (`LAYOUT`, bumped whenever the
 * data of `SessionStateData` or the turn machine's context changes shape) or another
 * turn machine (its definition's digest), or when it does not open or restore.
 *
 * The transcript holds what the model sees, sealed layers opened (part D), so the saved
 * state is sealed as a whole under the tenant's key, as a sealed layer of a record is.
 */
import { createHash } from 'node:crypto';
import { turnMachine } from '../machines/turn.machine.ts';
import { openLayer, sealLayer } from '../sessions/sealing.ts';
import type { LogStore } from '../storage/log-store.ts';
import type { WorkStore } from '../storage/work-store.ts';
import { SessionState, type SessionStateData } from './session-state.ts';

/** The layout of the saved data; bump it when `SessionStateData` changes shape. */
const LAYOUT = 3;

/** The turn machine's definition, digested: a saved state of another machine is refused. */
const MACHINE = createHash('sha256')
  .update(JSON.stringify(turnMachine.definition))
  .digest('base64url')
  .slice(0, 16);

interface Saved {
  readonly layout: number;
  readonly machine: string;
  readonly head: number;
  readonly state: SessionStateData;
}

/** Records landed since the last save after which an active driver saves again. */
export const SAVE_WHILE_ACTIVE = 500;
/** Records since the last save that make a driver that leaves save its state. */
export const SAVE_AT_REST = 64;

/** Saves `state` at its head, sealed under the tenant's key. */
export async function saveState(
  work: WorkStore,
  state: SessionState,
  tenantKey: Buffer,
): Promise<void> {
  const saved: Saved = { layout: LAYOUT, machine: MACHINE, head: state.head, state: state.data() };
  await work.saveTurnState(state.session, saved.head, JSON.stringify(sealLayer(saved, tenantKey)));
  state.savedAt = Math.max(state.savedAt, saved.head);
}

/**
 * The session's state, restored from its saved state when one is usable, else fresh at
 * cursor 0; the caller catches it up with the log.
 */
export async function restoreState(
  work: WorkStore,
  session: string,
  tenantKey: Buffer,
): Promise<SessionState> {
  const row = await work.turnState(session);
  const saved = row === null ? null : openSaved(row.state, tenantKey);
  if (saved === null) return new SessionState(session, tenantKey);
  let state: SessionState;
  try {
    state = new SessionState(session, tenantKey, saved.state);
  } catch {
    // A snapshot the turn machine cannot restore is refused like any unusable save.
    return new SessionState(session, tenantKey);
  }
  state.savedAt = saved.head;
  return state;
}

/** Restores the session's state and catches it up with its log (what a taking-up costs). */
export async function rebuildState(
  work: WorkStore,
  log: LogStore,
  session: string,
  tenantKey: Buffer,
): Promise<SessionState> {
  const state = await restoreState(work, session, tenantKey);
  await state.catchUp(log);
  return state;
}

function openSaved(text: string, tenantKey: Buffer): Saved | null {
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch {
    return null;
  }
  const opened = openLayer(stored, tenantKey);
  if (!opened.ok || typeof opened.value !== 'object' || opened.value === null) return null;
  const saved = opened.value as Partial<Saved>;
  if (saved.layout !== LAYOUT || saved.machine !== MACHINE || saved.state === undefined) {
    return null;
  }
  return saved as Saved;
}
