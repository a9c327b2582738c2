/**
 * The vendor flow as one registration: proposals, the poll, consent and its
 * page, installs and their keys. The route files share the process's one `ProposalFlow`
 * (`src/services.ts`), so every proposal runs in the one actor host, whose mailboxes
 * serialise the commands to each proposal; the host passivates its actors when the
 * services close with the app.
 */
import type { FastifyInstance } from 'fastify';
import type { TokenService } from '../../auth/tokens.ts';
import type { Entropy } from '../../clock.ts';
import type { InstallHooks } from '../../consent/installs.ts';
import type { ProposalFlow } from '../../consent/proposals.ts';
import type { OidcVerifier } from '../../console/oidc.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import { consentRoutes } from '../consent/consent.ts';
import { installKeyRoutes } from '../installs/keys.ts';
import { installRoutes } from '../installs/installs.ts';
import { appdocRoutes } from './appdoc.ts';
import { pollRoute } from './poll.ts';

/** What the flow is built from (parts of `AppDeps` and of `Services`). */
export interface VendorFlowDeps {
  readonly appdocBodyLimit?: number;
  readonly controlStore: ControlStore;
  readonly tokens: TokenService;
  readonly entropy: Entropy;
  readonly proposals: ProposalFlow;
  /** What else a deleted install takes with it: its sessions (decisions row 76). */
  readonly installHooks: InstallHooks;
  /** The consent page signs owners in with `CONSOLE_OIDC_ISSUER` when there is one. */
  readonly oidc: OidcVerifier | undefined;
  /** `OPERATOR_GRANT`: whether the consent page offers the operator token. */
  readonly operatorGrant?: boolean;
}

/** Registers every route of the vendor flow. */
export function vendorFlowRoutes(app: FastifyInstance, deps: VendorFlowDeps): void {
  const flow = deps.proposals;
  appdocRoutes(app, deps, flow);
  pollRoute(app, flow);
  consentRoutes(app, deps, flow);
  installRoutes(app, deps, deps.installHooks);
  installKeyRoutes(app, deps);
}
