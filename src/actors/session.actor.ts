/**
 * The session as a hosted actor: `sessionMachine` (interface 3.1) with its effects
 * provided, answering each command with the machine's `session.answered`.
 *
 * What goes through the host, and what does not. Opening and archiving change the
 * session's life (`none → live → archived`), are rare, and carry effects that must run
 * once per change (`session.opened` lands at cursor 1, `session.archived` lands last):
 * they are commands to this actor, serialised per session and committed with the
 * snapshot's version check. Appends are not. Hosting every append would add a snapshot
 * read and a versioned write to the control store per request, and decide nothing the log
 * store does not already decide better: the store checks the idempotency key, refuses an
 * archived stream and mints the cursors in one atomic step (3.1 row 2, rows 9 and 13),
 * and an append never moves the machine (`live` answers `accepted` and stays). So the
 * append path (`src/sessions/intake.ts`) applies the same rules at the edge with the log
 * store as the source of truth, keeping the append to one token check and one store call.
 *
 * Per-command data. The machine's events carry the edge's checks only; what an effect
 * needs beyond them (the session's directory record and pinned document at open, the
 * archiving producer `console:<user>`) rides on the command as extra members, which
 * XState passes through to the effect unchanged (`OpenCommand`, `ArchiveCommand`).
 *
 * Effects run before the commit and again if the commit loses a race, so both are
 * idempotent: the open lands under a store key and files the directory only once, and a
 * second archive of the log answers its final record.
 */
import { Unavailable } from '../errors.ts';
import {
  sessionMachine,
  type ArchiveEffect,
  type SessionAnswer,
  type SessionEvent,
} from '../machines/session.machine.ts';
import type { ActorType, CommandOf } from './actor-type.ts';

/** Snapshots of sessions live under this type in the control store. */
export const SESSION_ACTOR = 'session';

/** The effects of opening and archiving, provided by `src/sessions/lifecycle.ts`. */
export interface SessionEffects<TOpening, TArchiving> {
  /** Lands `session.opened` and files the session in the directory. */
  landOpened(opening: TOpening): Promise<void>;
  /** Row 60: ends the turn in flight, if any (`turn.ended archived`). */
  cancelTurn(params: ArchiveEffect, archiving: TArchiving): Promise<void>;
  /** Row 60: lands `session.archived` last and marks the directory. */
  landArchived(params: ArchiveEffect, archiving: TArchiving): Promise<void>;
}

type Command = CommandOf<typeof sessionMachine>;

/** `session.requested` with what the open effect needs. */
export type OpenCommand<TOpening> = Extract<Command, { type: 'session.requested' }> & {
  readonly opening: TOpening;
};

/** `archive.requested` with what the archive effects need. */
export type ArchiveCommand<TArchiving> = Extract<Command, { type: 'archive.requested' }> & {
  readonly archiving: TArchiving;
};

/** The extra member `name` of a command, as the effect sees its event. */
function payload(event: SessionEvent, name: 'opening' | 'archiving'): unknown {
  const value = (event as unknown as Record<string, unknown>)[name];
  if (value === undefined) throw new Error(`${event.type} was sent without its ${name}`);
  return value;
}

/** The session actor type, with `effects` as its open and archive effects. */
export function sessionActor<TOpening, TArchiving>(
  effects: SessionEffects<TOpening, TArchiving>,
): ActorType<typeof sessionMachine, SessionAnswer> {
  return {
    type: SESSION_ACTOR,
    // A session takes two commands in its life, its open and its archive, often days
    // apart; kept for the host's minute, 10,000 sessions opened held about 17 KB each.
    keepMs: 0,
    logic: (effect) => {
      // Effects of one transition run in the order the chart lists them (row 60: the turn
      // ends before session.archived lands). A throw while starting the work (a command
      // without its payload) fails the command too.
      let chain: Promise<void> = Promise.resolve();
      const run = (work: () => Promise<void>): void => {
        chain = chain.then(work);
        effect(chain);
      };
      return sessionMachine.provide({
        actions: {
          landOpened: ({ event }) => {
            run(() => effects.landOpened(payload(event, 'opening') as TOpening));
          },
          cancelTurn: ({ event }, params) => {
            run(() => effects.cancelTurn(params, payload(event, 'archiving') as TArchiving));
          },
          landArchived: ({ event }, params) => {
            run(() => effects.landArchived(params, payload(event, 'archiving') as TArchiving));
          },
        },
      });
    },
    answer: (_, emitted) => {
      // Invariant 1 of the machine: every event is answered exactly once.
      const last = emitted.at(-1);
      if (last === undefined) {
        throw new Unavailable('actor_failed', 'the session machine gave no answer');
      }
      return last.answer;
    },
  };
}
