/** What a process's turn runtime (`runtime.ts`) is built from: its stores and settings. */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import type { ToolCallOutcome, ToolCallRequest } from '../connections/tool-calls.ts';
import type { GateClaims } from '../gate/gate.ts';
import type { InferenceProvider } from '../inference/provider.ts';
import type { SessionValue } from '../resources/types.ts';
import type { SessionDirectory } from '../sessions/directory.ts';
import type { ControlStore } from '../storage/control-store.ts';
import type { LogStore } from '../storage/log-store.ts';
import type { WorkStore } from '../storage/work-store.ts';
import type { TurnEnded } from './steps.ts';

export interface TurnRuntimeOptions {
  readonly log: LogStore;
  readonly control: ControlStore;
  readonly work: WorkStore;
  readonly directory: SessionDirectory;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** The root key the tenants' sealing keys derive from. */
  readonly sealKey: Buffer;
  /** Providers by the `provider` of an inference option (2.13). */
  readonly providers: Readonly<Record<string, InferenceProvider>>;
  /** LEASE_MS: how long a driver's lease lasts without renewal. */
  readonly leaseMs: number;
  /** How often the sweep looks for due sessions (ms). */
  readonly sweepMs: number;
  /** How long a driver stays after its last work, lease held, for the next wake (ms). */
  readonly lingerMs?: number;
  /** How long a session's turn state is kept in memory unasked for (ms; `state-cache.ts`). */
  readonly stateIdleMs?: number;
  /** SESSION_IDLE_ARCHIVE (row 61), ms. */
  readonly idleArchiveMs: number;
  /** Row 61: archives a session as idle. */
  archiveIdle(session: SessionValue): Promise<void>;
  /** Signs the gate of an allowed call with the service's key (part B). */
  signGate(claims: GateClaims): Promise<string>;
  /** Calls a tenant's extra tool over MCP (row 89). */
  callTool(request: ToolCallRequest): Promise<ToolCallOutcome>;
  /** Hears each `turn.ended` this process landed (metrics); nothing by default. */
  readonly turnEnded?: TurnEnded;
  /**
   * Hears each driving record admitted (metrics): whether its session was marked due for
   * it, or it was held on the entry of the driver here (`TurnRuntime.admit`).
   */
  readonly admitted?: (how: 'marked' | 'held') => void;
}

/** A session's directory record as the runtime reads it (null: no such session). */
export type SessionRow = Awaited<ReturnType<SessionDirectory['get']>>;
