/**
 * What the control store conformance suite needs from a backend, and the builders its
 * test groups share (`control-store.contract.ts`, `control-store-records.contract.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { ResourceKind, ResourceValues } from '../../src/resources/types.ts';
import type { ControlStore, ControlWrite, IndexValues } from '../../src/storage/control-store.ts';

/** A backend under test: the suite opens several instances on one server or file. */
export interface ControlStoreFixture {
  /** A new independent instance (its own connections) on the same server or file, same secrets key. */
  open(): Promise<ControlStore>;
  /** Everything the backend holds at rest, as text (table rows, file bytes): secrets must not show. */
  atRest(): Promise<string>;
  /** Drops whatever setup made. Every opened store is closed first. */
  cleanup(): Promise<void>;
}

/** The stores of one suite run: a main instance, more on demand, all closed at the end. */
export interface ControlStoreContext {
  store(): ControlStore;
  open(): Promise<ControlStore>;
  atRest(): Promise<string>;
}

/** A fresh scope: every test writes where no other test does. */
export function scopeId(): string {
  return `t-${randomUUID()}`;
}

/**
 * A put write. The suite checks that a backend keeps any JSON document under any kind, so
 * its values are plain JSON rather than the shapes `ResourceValues` registers.
 */
export function put(
  kind: ResourceKind,
  scope: string,
  id: string,
  value: unknown,
  expect: number | null,
  index?: IndexValues,
): ControlWrite {
  return {
    op: 'put',
    kind,
    scope,
    id,
    value: value as ResourceValues[ResourceKind],
    expect,
    ...(index === undefined ? {} : { index }),
  } as ControlWrite;
}
