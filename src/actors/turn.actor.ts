/**
 * The turn as an actor: `turnMachine` (decisions part C), one actor per session, driven
 * by the session's log through a `LogActor` (`src/turns/session-state.ts` holds it).
 *
 * It is started and sent its events by the same code as the host's actors
 * (`activation.ts`); what differs is its store. Its events are the landed records, so the
 * log is where its state is kept and a landed record is its commit: no snapshot is
 * written per event and no command is queued, and what a session's driver lands next
 * (`src/turns/driver.ts`) is decided from its snapshot. The machine is pure and has no
 * effects to provide: the debts it records (`owed`) are paid by the driver landing them.
 */
import { turnMachine } from '../machines/turn.machine.ts';
import type { ActorKind } from './actor-type.ts';

/** The turn actor's kind. Its saved snapshots are in the work store, not under its name. */
export const turnActor: ActorKind<typeof turnMachine> = {
  type: 'turn',
  logic: () => turnMachine,
};
