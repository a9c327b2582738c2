/**
 * `@agent-session-service/client`: a typed client of the agent session service for
 * vendors, executors and dashboards. Fetch and WebSocket only: it runs in
 * browsers and in Node 24.
 */
export {
  bearer,
  bodyOf,
  Client,
  createClient,
  type Api,
  type ClientOptions,
  type OpenSessionBody,
  type Proposal,
  type Receipt,
  type SessionGrant,
  type VendorDocument,
} from './client.ts';
export { SLOW_DOWN_MS, type ConsentOptions, type ConsentProgress } from './consent.ts';
export type { AppendOptions, Envelope, OfferedRecord } from './append.ts';
export {
  runExecutor,
  verifyGate,
  type Allowed,
  type AllowedCall,
  type Completion,
  type ExecutorOptions,
} from './executor/run.ts';
export { ExecutorToken, type ExecutorIdentity } from './executor/token.ts';
export { argsDigest, canonicalJson } from './executor/jcs.ts';
export { ServiceKeys, signJwt, type CryptoKey } from './executor/jws.ts';
export { TailDisconnected, type TailLine } from './lines.ts';
export type { components, paths } from './openapi.ts';
export { ServiceProblem, type FieldError, type ProblemBody } from './problem.ts';
export type {
  ConsentAnswer,
  ConsentRead,
  ConsoleToken,
  ConsoleTokenBody,
  DeclineAnswer,
  TenantConfig,
} from './owner.ts';
export { SessionClient, type SessionStatus } from './session.ts';
export type { LandedRecord, TailEnd, TailOptions } from './tail.ts';
export { DEFAULT_RETRY, type Fetch, type RetryPolicy } from './transport.ts';
