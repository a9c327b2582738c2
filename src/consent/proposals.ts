/**
 * The vendor flow's proposals (interface 2.8, table 3.2, 4.1, 4.3; decisions rows 21, 28
 * to 30, 72, 92 to 94): each proposal runs as a virtual actor of `proposalMachine` in the
 * actor host, addressed by its request id. The machine decides every answer; this module
 * prepares its events (hashing the poll secret, checking the tenant config, minting ids)
 * and turns its answers into wire answers or typed errors.
 *
 * Beside the machine's snapshot, a `proposal` resource keeps what the machine does not:
 * the vendor document, the install id, the tenant it is bound to and the key's salt
 * (`ProposalValue`). Requests with no such resource are answered here, without waking an
 * actor, so unknown request ids never leave snapshots behind.
 */
import { z } from 'zod';
import type { ActorHost } from '../actors/actor-host.ts';
import type { ActorType, CommandOf } from '../actors/actor-type.ts';
import { PROPOSAL_ACTOR, proposalActor } from '../actors/proposal.actor.ts';
import { credentialLookup, issueCredential } from '../auth/opaque.ts';
import type { Clock, Entropy } from '../clock.ts';
import { Conflict, Forbidden, NotFound, Unauthenticated } from '../errors.ts';
import {
  PROPOSAL_LIFETIME_MS,
  type ProposalAnswer as MachineAnswer,
  type proposalMachine,
} from '../machines/proposal.machine.ts';
import { DEFAULT_PROPOSAL_RETENTION_MS } from '../resources/retention.ts';
import type { InstallValue, ProposalValue } from '../resources/types.ts';
import type { ControlStore, Versioned } from '../storage/control-store.ts';
import type { ConsentAnswer, TenantConfig } from '../schemas/tenant.ts';
import type {
  ConsentRead,
  DeclineAnswer,
  ProposalAnswer,
  VendorDocument,
} from '../schemas/vendor.ts';
import { vendorHash } from './documents.ts';
import { installEffects } from './install-effects.ts';
import { planInstallKey } from './install-key.ts';
import { pollReceipt, type PollReceipt } from './poll.ts';
import { checkConfig } from './surface.ts';

export interface ProposalFlowDeps {
  /** The process's actor host (`src/services.ts`); it closes with the services. */
  readonly host: ActorHost;
  readonly store: ControlStore;
  readonly clock: Clock;
  readonly entropy: Entropy;
  /** Decisions row 1: `consent_url` derives from it. */
  readonly baseUrl: string;
  /**
   * How long an ended proposal is kept after its ten minutes before the retention sweep
   * deletes it (`src/resources/retention.ts`); a day by default.
   */
  readonly retentionMs?: number;
}

/** What the consent read needs of the machine's persisted snapshot. */
const StoredProposal = z.object({
  value: z.enum(['none', 'pending', 'granted', 'lapsed', 'declined']),
  context: z.object({ expires: z.number(), install: z.string().nullable() }),
});

const NO_SUCH_REQUEST = 'no such request, or it lapsed';

/** The proposals of one process, over its actor host. */
export class ProposalFlow {
  readonly #deps: ProposalFlowDeps;
  readonly #host: ActorHost;
  readonly #actor: ActorType<typeof proposalMachine, MachineAnswer>;

  constructor(deps: ProposalFlowDeps) {
    this.#deps = deps;
    this.#host = deps.host;
    this.#actor = proposalActor(installEffects(deps.store));
  }

  /**
   * 3.2 row 1: lands a pending proposal of `vendor` (checked by the route) and answers 2.8.
   * `update` is the install of `POST /installs/{id}/proposals`, whose key is kept.
   */
  async propose(
    vendor: VendorDocument,
    update: Versioned<InstallValue> | null,
  ): Promise<ProposalAnswer> {
    const { store, entropy, baseUrl } = this.#deps;
    // 2.8: a request per POST, so two proposals of one document are two requests.
    const request = `rq_${entropy.bytes(16).toString('hex')}`;
    const secret = issueCredential('ps', entropy);
    const hash = vendorHash(vendor);
    const plan = update === null ? planInstallKey(secret.value, request, entropy) : null;
    const value: ProposalValue = {
      request,
      vendor,
      vendorHash: hash,
      install: update?.id ?? `in_${entropy.bytes(16).toString('hex')}`,
      update: update !== null,
      tenant: update?.value.tenant ?? null,
      salt: plan?.salt ?? null,
      keyHash: plan?.keyHash ?? null,
    };
    // Every proposal ends ten minutes on (lapsed, or granted with its receipt spent) and is
    // deleted a retention period later: an unauthenticated POST leaves nothing for good.
    const retention = this.#deps.retentionMs ?? DEFAULT_PROPOSAL_RETENTION_MS;
    const expires = this.#deps.clock.now() + PROPOSAL_LIFETIME_MS + retention;
    await store.write([
      { op: 'put', kind: 'proposal', scope: '', id: request, value, expect: 0, expires },
    ]);
    const answer = await this.#send(request, {
      type: 'proposal.submitted',
      request,
      vendor: hash,
      secret: secret.hash,
      install: update?.id ?? null,
    });
    if (answer.outcome !== 'proposed') throw unexpected(answer);
    return {
      request,
      poll_secret: secret.value,
      consent_url: `${baseUrl}/consent/${request}`,
      vendor: hash,
      expires: answer.expires,
      interval: answer.interval,
    };
  }

  /** Decisions row 30: a poll with the presented poll secret (RFC 8628 §3.5). */
  async poll(request: string, presented: string): Promise<PollReceipt> {
    const secret = credentialLookup(presented, 'ps');
    if (secret === null)
      throw new Unauthenticated('the poll secret is not one this service issued', true);
    const proposal = await this.#deps.store.get('proposal', '', request);
    if (proposal === null) throw badSecret();
    const answer = await this.#send(request, { type: 'poll.requested', secret });
    if (answer.outcome === 'bad_secret') throw badSecret();
    if (answer.outcome === 'expired_token') await this.#forgetSalt(proposal);
    return pollReceipt(answer, proposal.value, presented);
  }

  /** Decisions row 72: the proposal as a member of `tenant` reads it. */
  async read(tenant: string, request: string): Promise<ConsentRead> {
    const { store, clock } = this.#deps;
    const proposal = await store.get('proposal', '', request);
    const stored = await store.loadSnapshot(PROPOSAL_ACTOR, request);
    const parsed = StoredProposal.safeParse(stored?.snapshot);
    if (proposal === null || !parsed.success)
      throw new NotFound('no_such_request', NO_SUCH_REQUEST);
    if (proposal.value.tenant !== null && proposal.value.tenant !== tenant) throw otherTenant();
    const { value: state, context } = parsed.data;
    // Row 72: a lapsed request reads as none, whether or not the actor moved on yet.
    // A declined request reads as declined until its ten minutes are over, like a pending one.
    const live =
      state === 'granted' ||
      ((state === 'pending' || state === 'declined') && clock.now() < context.expires);
    if (!live) throw new NotFound('no_such_request', NO_SUCH_REQUEST);
    return {
      request,
      state,
      vendor: proposal.value.vendor,
      hash: proposal.value.vendorHash,
      expires: context.expires,
      install: proposal.value.update || state === 'granted' ? context.install : null,
    };
  }

  /**
   * 3.2 row 2 (4.3 `POST /consent/{request}`) by an owner of `tenant` (the route checked
   * the role): creates the install and its key, or keeps an update's, and answers it.
   */
  async consent(tenant: string, request: string, config: TenantConfig): Promise<ConsentAnswer> {
    const { store } = this.#deps;
    const proposal = await store.get('proposal', '', request);
    if (proposal === null) throw new NotFound('no_such_request', NO_SUCH_REQUEST);
    // Row 94: an update, or a granted request, belongs to one tenant; only its owners act.
    const owner = proposal.value.tenant === null || proposal.value.tenant === tenant;
    const check = owner
      ? await checkConfig(store, tenant, proposal.value.vendor, config)
      : { unresolved: null, unfit: null };
    const answer = await this.#send(request, {
      type: 'consent.given',
      owner,
      resolves: check.unresolved === null,
      fits: check.unfit === null,
      // The machine carries the key's hash; the key itself is derived at the poll.
      grant: { install: proposal.value.install, key: proposal.value.keyHash ?? '', tenant, config },
    });
    switch (answer.outcome) {
      case 'granted':
        return { install: answer.install };
      case 'declined':
        throw declinedAlready();
      case 'unresolved':
      case 'unfit':
        throw check.unresolved ?? check.unfit ?? unexpected(answer);
      default:
        return this.#refuse(proposal, answer);
    }
  }

  /**
   * An owner of `tenant` (the route checked the role) declines the request: the vendor's
   * poll answers `access_denied` from then on (RFC 8628 §3.5). Declining again answers the
   * same; a granted request is a conflict naming its install.
   */
  async decline(tenant: string, request: string): Promise<DeclineAnswer> {
    const proposal = await this.#deps.store.get('proposal', '', request);
    if (proposal === null) throw new NotFound('no_such_request', NO_SUCH_REQUEST);
    const owner = proposal.value.tenant === null || proposal.value.tenant === tenant;
    const answer = await this.#send(request, { type: 'consent.declined', owner });
    switch (answer.outcome) {
      case 'declined':
        // No key will ever be handed out: the salt it derives from goes now.
        await this.#forgetSalt(proposal);
        return { request, state: 'declined' };
      default:
        return this.#refuse(proposal, answer);
    }
  }

  /** Throws what a consent or a decline the machine refused answers the owner. */
  async #refuse(proposal: Versioned<ProposalValue>, answer: MachineAnswer): Promise<never> {
    switch (answer.outcome) {
      case 'already_granted':
        throw new Conflict('already_granted', 'the request was granted already', {
          extensions: { install: answer.install },
        });
      case 'not_owner':
        throw otherTenant();
      case 'not_found':
        await this.#forgetSalt(proposal);
        throw new NotFound('no_such_request', NO_SUCH_REQUEST);
      default:
        throw unexpected(answer);
    }
  }

  #send(request: string, command: CommandOf<typeof proposalMachine>): Promise<MachineAnswer> {
    return this.#host.send(this.#actor, request, command);
  }

  /** Row 30: once the proposal lapsed, its key can no longer be derived (`install-key.ts`). */
  async #forgetSalt(proposal: Versioned<ProposalValue>): Promise<void> {
    if (proposal.value.salt === null) return;
    const value: ProposalValue = { ...proposal.value, salt: null };
    await this.#deps.store
      .write([
        {
          op: 'put',
          kind: 'proposal',
          scope: '',
          id: proposal.id,
          value,
          expect: proposal.version,
        },
      ])
      // A concurrent writer got there first; the next lapsed answer tries again.
      .catch((error: unknown) => {
        if (!(error instanceof Conflict)) throw error;
      });
  }
}

function badSecret(): Unauthenticated {
  return new Unauthenticated('the poll secret does not match the request', true);
}

function declinedAlready(): Conflict {
  return new Conflict('request_declined', 'an owner of the tenant declined the request already');
}

function otherTenant(): Forbidden {
  return new Forbidden('not_owner', 'the request belongs to another tenant');
}

function unexpected(answer: MachineAnswer): Error {
  return new Error(`the proposal machine answered ${answer.outcome} out of turn`);
}
