/**
 * The vendor flow as one registration (issue 5): proposals, the poll, consent and its
 * page, installs and their keys. The route files share one `ProposalFlow`, so every
 * proposal of this process runs in one actor host, whose mailboxes serialise the commands
 * to each proposal; the host passivates its actors when the app closes.
 */
import type { FastifyInstance } from 'fastify';
import type { TokenService } from '../../auth/tokens.ts';
import type { Clock, Entropy } from '../../clock.ts';
import { NO_INSTALL_HOOKS, type InstallHooks } from '../../consent/installs.ts';
import { ProposalFlow } from '../../consent/proposals.ts';
import type { ControlStore } from '../../storage/control-store.ts';
import { consentRoutes } from '../consent/consent.ts';
import { installKeyRoutes } from '../installs/keys.ts';
import { installRoutes } from '../installs/installs.ts';
import { appdocRoutes } from './appdoc.ts';
import { pollRoute } from './poll.ts';

/** What the flow is built from (a subset of `AppDeps`). */
export interface VendorFlowDeps {
  readonly baseUrl: string;
  readonly appdocRateLimitPerMinute: number;
  readonly controlStore: ControlStore;
  readonly tokens: TokenService;
  readonly clock: Clock;
  readonly entropy: Entropy;
}

/**
 * Registers every route of the vendor flow. `hooks` says what else a deleted install takes
 * with it; until sessions provide one (issue 6), nothing.
 */
export function vendorFlowRoutes(
  app: FastifyInstance,
  deps: VendorFlowDeps,
  hooks: InstallHooks = NO_INSTALL_HOOKS,
): void {
  const flow = new ProposalFlow({
    store: deps.controlStore,
    clock: deps.clock,
    entropy: deps.entropy,
    baseUrl: deps.baseUrl,
  });
  app.addHook('onClose', () => flow.close());
  appdocRoutes(app, deps, flow);
  pollRoute(app, flow);
  consentRoutes(app, deps, flow);
  installRoutes(app, deps, hooks);
  installKeyRoutes(app, deps);
}
