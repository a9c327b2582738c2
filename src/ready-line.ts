/**
 * The one human line `npm start` prints once it listens, beside its JSON
 * logs: where the API, its reference and the console API are, where the data lives, and
 * how to get an operator token. Plain text on stderr, so stdout stays JSON lines for a log
 * collector. It names no secret: the operator token itself is printed once, apart.
 */
import { operatorTokenFile } from './auth/key-material.ts';

export interface ReadyFacts {
  /** `BASE_URL`, or the default derived from `HOST` and `PORT`. */
  readonly baseUrl: string;
  /** The absolute `DATA_DIR`. */
  readonly dataDir: string;
  /** Where the stores are: the embedded database, or the servers' kinds. */
  readonly stores: string;
  /** Whether the operator grant mints console tokens (`OPERATOR_GRANT`). */
  readonly operatorGrant: boolean;
  /** The operator token was generated at this start (and printed just above). */
  readonly generatedNow: boolean;
  /** `OPERATOR_TOKEN` is set, so the token is the deployment's own. */
  readonly configured: boolean;
  /** `CONSOLE_OIDC_ISSUER`, when owners sign in there. */
  readonly issuer: string | undefined;
}

/** How a person gets a console token on this deployment. */
function signIn(facts: ReadyFacts): string {
  const idp = facts.issuer === undefined ? '' : `owners sign in at ${facts.issuer}; `;
  if (!facts.operatorGrant) return `${idp}the operator grant is off`;
  if (facts.configured) return `${idp}operator token: the OPERATOR_TOKEN you set`;
  if (facts.generatedNow) return `${idp}operator token: printed above, shown once`;
  return `${idp}operator token: printed at the first start (lost it? stop, delete ${operatorTokenFile(facts.dataDir)} and start again for a new one)`;
}

/** The line, without its newline. */
export function readyLine(facts: ReadyFacts): string {
  const base = facts.baseUrl;
  return [
    `Agent session service ready at ${base}`,
    `docs ${base}/docs`,
    `console ${base}/docs#tag/console (sign in: POST ${base}/console/token)`,
    `data ${facts.dataDir} (${facts.stores})`,
    signIn(facts),
  ].join(' | ');
}
