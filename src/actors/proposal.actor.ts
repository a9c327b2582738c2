/**
 * The proposal as a hosted actor: `proposalMachine` (interface 3.2) with its install
 * effects provided, answering each command with the machine's `proposal.answered`.
 *
 * The edge supplies the effects. They run before the consent is committed and run again
 * if the commit loses a race and the command is retried (`EffectSink`), so they must be
 * idempotent: e.g. derive the install id from the request, or create it only if absent.
 */
import { Unavailable } from '../errors.ts';
import {
  proposalMachine,
  type InstallEffect,
  type ProposalAnswer,
} from '../machines/proposal.machine.ts';
import type { ActorType } from './actor-type.ts';

/** The real install effects of a consent (table 3.2 row 2, decisions row 94). */
export interface ProposalEffects {
  /** Creates the install and its key. */
  createInstall(params: InstallEffect): Promise<void>;
  /** Replaces the install's vendor document and tenant config; its key is kept. */
  updateInstall(params: InstallEffect): Promise<void>;
}

/** Snapshots of proposals live under this type in the control store. */
export const PROPOSAL_ACTOR = 'proposal';

/** The proposal actor type, with `effects` as its install effects. */
export function proposalActor(
  effects: ProposalEffects,
): ActorType<typeof proposalMachine, ProposalAnswer> {
  return {
    type: PROPOSAL_ACTOR,
    logic: (effect) =>
      proposalMachine.provide({
        actions: {
          createInstall: (_, params) => {
            effect(effects.createInstall(params));
          },
          updateInstall: (_, params) => {
            effect(effects.updateInstall(params));
          },
        },
      }),
    answer: (_, emitted) => {
      // The machine emits nothing but `proposal.answered`.
      const last = emitted.at(-1);
      // Invariant 1 of the machine: every event is answered exactly once.
      if (last === undefined) {
        throw new Unavailable('actor_failed', 'the proposal machine gave no answer');
      }
      return last.answer;
    },
  };
}
