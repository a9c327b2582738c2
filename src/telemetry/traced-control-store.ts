/**
 * A `ControlStore` that makes a span of every call to the store it wraps
 * (`store-spans.ts`), and otherwise is that store. A call's resource kind is its
 * `db.collection.name`; ids, scopes, secret names and values, and documents stay out of
 * the span. Built only when tracing is on (`traced-stores.ts`).
 */
import type { Tracer } from '@opentelemetry/api';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_BATCH_SIZE,
} from '@opentelemetry/semantic-conventions';
import type {
  ControlStore,
  ControlWrite,
  ListOptions,
  SnapshotRecord,
  UsageDay,
  UsageDelta,
  Versioned,
} from '../storage/control-store.ts';
import type { ResourceKind, ResourceValues } from '../resources/types.ts';
import { StoreSpans } from './store-spans.ts';

const collection = (name: string) => ({ [ATTR_DB_COLLECTION_NAME]: name });

export class TracedControlStore implements ControlStore {
  readonly backend: string;
  readonly #store: ControlStore;
  readonly #spans: StoreSpans;

  constructor(store: ControlStore, tracer: Tracer) {
    this.backend = store.backend;
    this.#store = store;
    this.#spans = new StoreSpans(tracer, 'control', store.backend);
  }

  get<K extends ResourceKind>(
    kind: K,
    scope: string,
    id: string,
  ): Promise<Versioned<ResourceValues[K]> | null> {
    return this.#spans.run('get', collection(kind), () => this.#store.get(kind, scope, id));
  }

  write(writes: readonly ControlWrite[]): Promise<Versioned<unknown>[]> {
    // One kind for a batch of one kind; a mixed batch names none.
    const kinds = new Set(writes.map((w) => w.kind));
    const [only] = kinds;
    return this.#spans.run(
      'write',
      {
        [ATTR_DB_OPERATION_BATCH_SIZE]: writes.length,
        ...(kinds.size === 1 && only !== undefined ? collection(only) : {}),
      },
      () => this.#store.write(writes),
    );
  }

  list<K extends ResourceKind>(
    kind: K,
    scope: string,
    options?: ListOptions,
  ): Promise<Versioned<ResourceValues[K]>[]> {
    return this.#spans.run('list', collection(kind), () => this.#store.list(kind, scope, options));
  }

  findByIndex<K extends ResourceKind>(
    kind: K,
    name: string,
    value: string,
  ): Promise<Versioned<ResourceValues[K]>[]> {
    // The index's name (`key_hash`) says what was looked up; its value (a key's hash) stays out.
    return this.#spans.run(
      'findByIndex',
      { ...collection(kind), 'agent_sessions.index': name },
      () => this.#store.findByIndex(kind, name, value),
    );
  }

  putSecretValue(scope: string, name: string, value: string): Promise<{ changed: boolean }> {
    return this.#spans.run('putSecretValue', collection('secret'), () =>
      this.#store.putSecretValue(scope, name, value),
    );
  }

  readSecretValue(scope: string, name: string): Promise<string | null> {
    return this.#spans.run('readSecretValue', collection('secret'), () =>
      this.#store.readSecretValue(scope, name),
    );
  }

  loadSnapshot(type: string, id: string): Promise<SnapshotRecord | null> {
    return this.#spans.run('loadSnapshot', collection(`${type}_snapshot`), () =>
      this.#store.loadSnapshot(type, id),
    );
  }

  saveSnapshot(type: string, id: string, snapshot: unknown, expect: number): Promise<number> {
    return this.#spans.run('saveSnapshot', collection(`${type}_snapshot`), () =>
      this.#store.saveSnapshot(type, id, snapshot, expect),
    );
  }

  purgeExpired(now: number, limit: number): Promise<number> {
    return this.#spans.run('purgeExpired', {}, () => this.#store.purgeExpired(now, limit));
  }

  addUsage(tenant: string, day: string, delta: UsageDelta): Promise<void> {
    return this.#spans.run('addUsage', collection('usage'), () =>
      this.#store.addUsage(tenant, day, delta),
    );
  }

  readUsage(tenant: string, from: string, to: string): Promise<UsageDay[]> {
    return this.#spans.run('readUsage', collection('usage'), () =>
      this.#store.readUsage(tenant, from, to),
    );
  }

  ping(): Promise<void> {
    return this.#spans.run('ping', {}, () => this.#store.ping());
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}
