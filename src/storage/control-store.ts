/**
 * The control store port: everything that is not a session log (tenants, memberships,
 * installs, proposals, connections, inference options, secrets, usage, actor snapshots).
 *
 * Resources are JSON documents named by (kind, scope, id) with a version that grows by
 * one on every write; writes name the version they expect, so two processes can never
 * both commit from the same state. Secondary indexes answer the few lookups that are not
 * by name (an install by the hash of its key, a proposal by its request, the options that
 * reference a secret). Backends: SQLite (`node:sqlite`) and PostgreSQL; both pass
 * `test/contracts/control-store.contract.ts`.
 */

import type { ResourceKind, ResourceValues } from '../resources/types.ts';

/** A stored resource with its version and times (ms). */
export interface Versioned<T> {
  readonly kind: ResourceKind;
  /** The owner namespace: a tenant id, or `''` for resources that stand alone. */
  readonly scope: string;
  readonly id: string;
  readonly version: number;
  readonly created: number;
  readonly updated: number;
  readonly value: T;
}

/** Index entries of a resource: index name to the values it is found under. */
export type IndexValues = Readonly<Record<string, readonly string[]>>;

/** A write of `value` into resource (kind, scope, id): the value its kind registers. */
export type PutWrite<K extends ResourceKind = ResourceKind> = {
  readonly [Kind in K]: {
    readonly op: 'put';
    readonly kind: Kind;
    readonly scope: string;
    readonly id: string;
    readonly value: ResourceValues[Kind];
    /** 0: the resource must not exist; n: it must be at version n; null: no check. */
    readonly expect: number | null;
    /** Replaces every index entry of the resource. */
    readonly index?: IndexValues;
    /**
     * Unix ms from which `purgeExpired` may delete the resource; null keeps it for good.
     * Absent: a new resource is kept for good and a replaced one keeps what it had.
     */
    readonly expires?: number | null;
  };
}[K];

/** One write of an atomic batch. */
export type ControlWrite =
  | PutWrite
  | {
      readonly op: 'delete';
      readonly kind: ResourceKind;
      readonly scope: string;
      readonly id: string;
      /** n: it must be at version n; null: no check. Deleting nothing is not an error. */
      readonly expect: number | null;
    };

export interface ListOptions {
  /** Continue after this id (ids are listed in ascending order). */
  readonly after?: string;
  readonly limit?: number;
}

/** A persisted actor snapshot (XState `getPersistedSnapshot()` output) and its version. */
export interface SnapshotRecord {
  readonly version: number;
  readonly snapshot: unknown;
}

/** Usage counters added on a checkpoint (interface 2.15). */
export interface UsageDelta {
  readonly events: number;
  readonly bytesArchived: number;
  readonly sessionsCheckpointed: number;
  readonly tokens: Readonly<Record<string, { readonly input: number; readonly output: number }>>;
  readonly toolCalls: Readonly<Record<string, number>>;
}

/** One tenant's usage on one UTC day (interface 2.15). */
export interface UsageDay extends UsageDelta {
  readonly day: string;
}

/**
 * The control store. A failed version check throws `Conflict('version_conflict')`;
 * a batch is applied whole or not at all.
 */
export interface ControlStore {
  readonly backend: string;

  get<K extends ResourceKind>(
    kind: K,
    scope: string,
    id: string,
  ): Promise<Versioned<ResourceValues[K]> | null>;

  /** Applies every write in one transaction and answers the resources as written. */
  write(writes: readonly ControlWrite[]): Promise<Versioned<unknown>[]>;

  /** Resources of one kind in one scope, by ascending id. */
  list<K extends ResourceKind>(
    kind: K,
    scope: string,
    options?: ListOptions,
  ): Promise<Versioned<ResourceValues[K]>[]>;

  /** Resources of one kind whose index `name` holds `value`. */
  findByIndex<K extends ResourceKind>(
    kind: K,
    name: string,
    value: string,
  ): Promise<Versioned<ResourceValues[K]>[]>;

  /** Stores a secret value encrypted at rest; answers whether it differs from the stored one. */
  putSecretValue(scope: string, name: string, value: string): Promise<{ changed: boolean }>;
  /** The decrypted value, for the service's own use only; never served. */
  readSecretValue(scope: string, name: string): Promise<string | null>;

  /** Loads an actor's persisted snapshot. */
  loadSnapshot(type: string, id: string): Promise<SnapshotRecord | null>;
  /**
   * Saves a snapshot if the stored one is at `expect` (0: none stored yet); answers the
   * new version, or throws `Conflict('version_conflict')`.
   */
  saveSnapshot(type: string, id: string, snapshot: unknown, expect: number): Promise<number>;

  /**
   * Deletes up to `limit` resources whose `expires` is at or before `now`, earliest first,
   * each with its index entries and the persisted snapshot of the actor of the same type
   * and id (a proposal's machine), in one transaction; answers how many it deleted.
   * Concurrent purges are safe: a resource is deleted once.
   */
  purgeExpired(now: number, limit: number): Promise<number>;

  /** Adds a usage delta to (tenant, day). */
  addUsage(tenant: string, day: string, delta: UsageDelta): Promise<void>;
  /** Usage rows of a tenant between two days inclusive, days without usage left out. */
  readUsage(tenant: string, from: string, to: string): Promise<UsageDay[]>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
