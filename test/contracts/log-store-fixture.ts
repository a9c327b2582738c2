/**
 * What the log store conformance suite needs from a backend, and the few builders its
 * test groups share (`log-store.contract.ts`, `log-store-tail.contract.ts`).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, expect } from 'vitest';
import { Conflict } from '../../src/errors.ts';
import type { LogStore, PendingRecord, StoredRecord } from '../../src/storage/log-store.ts';

/** A backend under test: the suite opens several instances on one server or file. */
export interface LogStoreFixture {
  /** A new independent instance (its own connections) on the same backing server or file. */
  open(): Promise<LogStore>;
  /** Drops whatever setup made (schema, folder, keys). Every opened store is closed first. */
  cleanup(): Promise<void>;
}

/** The stores of one suite run: a main instance and more on demand, all closed at the end. */
export interface LogStoreContext {
  /** The instance most tests use. */
  store(): LogStore;
  /** Another independent instance, closed after the suite. */
  open(): Promise<LogStore>;
}

/** Registers the suite's set-up and tear-down in the current `describe`. */
export function useLogStores(setup: () => Promise<LogStoreFixture>): LogStoreContext {
  let fixture: LogStoreFixture | undefined;
  let main: LogStore | undefined;
  const opened: LogStore[] = [];
  const open = async (): Promise<LogStore> => {
    if (fixture === undefined) throw new Error('the log store fixture is not set up');
    const store = await fixture.open();
    opened.push(store);
    return store;
  };
  beforeAll(async () => {
    fixture = await setup();
    main = await open();
  });
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    await fixture?.cleanup();
  });
  return {
    store: () => {
      if (main === undefined) throw new Error('the log store fixture is not set up');
      return main;
    },
    open,
  };
}

/** A fresh stream name: every test writes to streams no other test touches. */
export function streamId(): string {
  return `s-${randomUUID()}`;
}

/** A plain public record whose body carries `text`. */
export function pendingRecord(text: string, overrides: Partial<PendingRecord> = {}): PendingRecord {
  return {
    kind: { name: 'message.submitted', version: 1 },
    producer: 'principal:alice',
    to: null,
    idem: null,
    body: JSON.stringify({ text }),
    ...overrides,
  };
}

/** Any record a caller may offer: kinds, addressing, idem keys and bodies of every shape. */
export const pendingRecordArb: fc.Arbitrary<PendingRecord> = fc.record({
  kind: fc.record({
    name: fc.constantFrom('message.submitted', 'turn.started', 'invoke.allowed', 'model.output'),
    version: fc.integer({ min: 1, max: 3 }),
  }),
  producer: fc.constantFrom('principal:alice', 'service:session', 'executor:e1'),
  to: fc.option(fc.constantFrom('executor:e1', 'connection:github'), { nil: null }),
  idem: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: null }),
  // Full Unicode so `size` is checked as bytes, not characters (decisions row 12).
  body: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify({ value })),
});

/** Batches of 1 to 4 records. */
export const batchArb = fc.array(pendingRecordArb, { minLength: 1, maxLength: 4 });

/**
 * Batches shaped as a client's (one producer and `to`, idem slots `<prefix><index>` or
 * none, often one kind), some with one record that breaks the shape: a backend may write
 * such batches more compactly, and must land them exactly as offered all the same.
 */
export const sharedBatchArb: fc.Arbitrary<PendingRecord[]> = fc
  .record({
    records: fc.array(pendingRecordArb, { minLength: 1, maxLength: 14 }),
    producer: pendingRecordArb.map((record) => record.producer),
    to: fc.option(fc.constantFrom('executor:e1', 'connection:github'), { nil: null }),
    prefix: fc.option(fc.constantFrom('', 'key:', 'tok:a:', 'call:1', '0'), { nil: null }),
    oneKind: fc.boolean(),
    breaker: fc.option(fc.tuple(fc.nat(13), pendingRecordArb), { nil: null }),
  })
  .map(({ records, producer, to, prefix, oneKind, breaker }) => {
    const kind = records[0]?.kind ?? { name: 'message.submitted', version: 1 };
    const shaped = records.map((record, index): PendingRecord => ({
      ...record,
      kind: oneKind ? kind : record.kind,
      producer,
      to,
      idem: prefix === null ? null : `${prefix}${String(index)}`,
    }));
    if (breaker !== null) shaped[breaker[0] % shaped.length] = breaker[1];
    return shaped;
  });

/** Resolves as `promise` does, or fails naming `what` after `ms`. */
export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} did not finish within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Follows `stream` from cursor 1 in the background: `seen` fills as the tail yields,
 * `ended` answers every record once the tail ends by itself (the archiving record),
 * `stop` aborts it and answers the same.
 */
export function follow(store: LogStore, stream: string) {
  const controller = new AbortController();
  const seen: StoredRecord[] = [];
  const ended = (async () => {
    for await (const record of store.tail(stream, { from: 1, signal: controller.signal })) {
      seen.push(record);
    }
    return seen;
  })();
  const stop = () => {
    controller.abort();
    return ended;
  };
  return { seen, ended, stop };
}

/** Every record a finite tail yields. */
export async function collect(records: AsyncIterable<StoredRecord>): Promise<StoredRecord[]> {
  const seen: StoredRecord[] = [];
  for await (const record of records) seen.push(record);
  return seen;
}

export function cursorsOf(records: readonly StoredRecord[]): number[] {
  return records.map((record) => record.envelope.cursor);
}

/** `[from, from + 1, …, to]`. */
export function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}

/** Expects `run` to fail with `Conflict(code)`; a synchronous throw counts as failing. */
export async function expectConflict(run: () => Promise<unknown>, code: string): Promise<void> {
  const failure = await (async () => run())().then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(Conflict);
  expect(failure).toMatchObject({ code });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `check` holds, failing naming `what` after `ms`. */
export async function eventually(ms: number, check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await sleep(10);
  }
}

/** A batch without an idempotency key. */
export const oneOff = (stream: string, records: readonly PendingRecord[]) =>
  ({ stream, records, key: null, fingerprint: '' }) as const;

/** Checks every envelope against what was offered (2.2): minted, stamped and kept fields. */
export function expectLanded(
  stream: string,
  offered: readonly PendingRecord[],
  landed: readonly StoredRecord[],
) {
  expect(landed).toHaveLength(offered.length);
  const at = landed[0]?.envelope.at;
  landed.forEach((record, i) => {
    const source = offered[i];
    if (source === undefined) throw new Error('more records landed than offered');
    expect(record.body).toBe(source.body);
    expect(record.envelope).toEqual({
      at,
      cursor: (landed[0]?.envelope.cursor ?? 0) + i,
      idem: source.idem,
      kind: source.kind,
      producer: source.producer,
      size: Buffer.byteLength(source.body),
      stream,
      to: source.to,
    });
  });
}
