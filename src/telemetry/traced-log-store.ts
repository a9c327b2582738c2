/**
 * A `LogStore` that makes a span of every call to the store it wraps (`store-spans.ts`),
 * and otherwise is that store: same answers, same errors, same tails. Built only when
 * tracing is on (`traced-stores.ts`).
 */
import type { Tracer } from '@opentelemetry/api';
import { ATTR_DB_OPERATION_BATCH_SIZE } from '@opentelemetry/semantic-conventions';
import type {
  AppendBatch,
  AppendResult,
  LogStore,
  PendingRecord,
  ReadRange,
  StoredRecord,
  StreamHead,
  TailOptions,
} from '../storage/log-store.ts';
import { StoreSpans } from './store-spans.ts';

export class TracedLogStore implements LogStore {
  readonly backend: string;
  readonly #store: LogStore;
  readonly #spans: StoreSpans;

  constructor(store: LogStore, tracer: Tracer) {
    this.backend = store.backend;
    this.#store = store;
    this.#spans = new StoreSpans(tracer, 'log', store.backend);
  }

  append(batch: AppendBatch): Promise<AppendResult> {
    return this.#spans.run(
      'append',
      { [ATTR_DB_OPERATION_BATCH_SIZE]: batch.records.length },
      () => this.#store.append(batch),
      (result) => ({ 'agent_sessions.append.outcome': result.outcome }),
    );
  }

  archive(stream: string, record: PendingRecord): Promise<StoredRecord> {
    return this.#spans.run('archive', {}, () => this.#store.archive(stream, record));
  }

  read(stream: string, range: ReadRange): Promise<StoredRecord[]> {
    return this.#spans.run(
      'read',
      {},
      () => this.#store.read(stream, range),
      (records) => ({ 'agent_sessions.records': records.length }),
    );
  }

  /**
   * One span for the whole tail, from its first read to its end, counting the records it
   * delivered, through the iterator or the `deliver` shortcut.
   */
  tail(stream: string, options: TailOptions): AsyncIterable<StoredRecord> {
    let delivered = 0;
    const deliver = options.deliver;
    const counting: TailOptions =
      deliver === undefined
        ? options
        : {
            ...options,
            deliver: (record) => {
              const taken = deliver(record);
              if (taken) delivered += 1;
              return taken;
            },
          };
    return this.#spans.follow('tail', this.#store.tail(stream, counting), () => delivered);
  }

  head(stream: string): Promise<StreamHead | null> {
    return this.#spans.run('head', {}, () => this.#store.head(stream));
  }

  readByKey(stream: string, key: string): Promise<StoredRecord[] | null> {
    return this.#spans.run('readByKey', {}, () => this.#store.readByKey(stream, key));
  }

  ping(): Promise<void> {
    return this.#spans.run('ping', {}, () => this.#store.ping());
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}
