/**
 * What a session's driver (`driver.ts`) is built from: the process's stores, clock and
 * effects, which every driver of the process shares (`DriverDeps`), and the session it
 * drives with its turn state, key, inference option and authorizer (`DriverSession`).
 */
import type { Clock } from '../clock.ts';
import type { ToolCallOutcome, ToolCallRequest } from '../connections/tool-calls.ts';
import type { GateClaims } from '../gate/gate.ts';
import type { InferenceProvider } from '../inference/provider.ts';
import type { Authorizer } from '../policy/authorizer.ts';
import type { InferenceValue } from '../resources/types.ts';
import type { LogStore } from '../storage/log-store.ts';
import type { WorkStore } from '../storage/work-store.ts';
import type { SessionState } from './session-state.ts';
import type { TurnEnded } from './steps.ts';
import type { WakeCounter } from './wake-counter.ts';

/** What every driver of the process shares. */
export interface DriverDeps {
  readonly log: LogStore;
  readonly work: WorkStore;
  readonly clock: Clock;
  /** Row 61: a session idle this long (ms) is archived. */
  readonly idleArchiveMs: number;
  /** How long (ms) the driver stays, lease held, after its last work (see `SessionDriver`). */
  readonly lingerMs: number;
  /** The session's wakes in this process while the driver runs. */
  readonly wakes: WakeCounter;
  /** Row 61: archives the session as idle (through the session actor). */
  archiveIdle(): Promise<void>;
  /** Signs the gate of an allowed call. */
  signGate(claims: GateClaims): Promise<string>;
  /** Calls a tenant's extra tool over MCP (row 89). */
  callTool(request: ToolCallRequest): Promise<ToolCallOutcome>;
  readonly turnEnded: TurnEnded;
}

/** The session a driver drives, ready to run (`session-configs.ts`). */
export interface DriverSession {
  readonly state: SessionState;
  readonly tenant: string;
  readonly tenantKey: Buffer;
  readonly option: InferenceValue;
  readonly provider: InferenceProvider;
  readonly authorizer: Authorizer;
}
