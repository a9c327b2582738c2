/**
 * Tail latency for `bench/log.ts`: records appended at a steady rate to some sessions,
 * each followed by some tails, timed from the append call to each delivery. The same
 * measure runs over the store (`storePath`) and over the raw way the backend's client
 * would carry a record to a reader (`log-raw-tails.ts`), so every figure has a same-run
 * baseline beside it.
 *
 * Appends are paced open-loop (never waiting for the previous answer), so a slow answer
 * shows in the figures instead of slowing the load. The send time rides in the body, so
 * a record delivered before its append answered still counts.
 */
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { LogStore, PendingRecord } from '../src/storage/log-store.ts';

/** A way from a writer to tails: the store's, or the raw one it is compared with. */
export interface TailPath {
  /** Lands `record` on `stream`; resolves once it is acknowledged. */
  write(stream: string, record: PendingRecord): Promise<void>;
  /**
   * Calls `seen` with the body of every record that lands on `stream` from now on, until
   * `signal` aborts; resolves when it has stopped.
   */
  follow(stream: string, seen: (body: string) => void, signal: AbortSignal): Promise<void>;
}

export interface Latency {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** p99 from the append call to its answer: the append queue the tails wait behind. */
  readonly appendP99: number;
  /** The bench process's own event-loop delay p99 meanwhile: a stalled process, not the store. */
  readonly loopP99: number;
  readonly delivered: number;
  readonly expected: number;
}

const PAD = 'x'.repeat(160);

/** A record of the usual size whose body starts with its send time: `{"t":<ms>,…`. */
export function pendingRecord(): PendingRecord {
  return {
    kind: { name: 'message.submitted', version: 1 },
    producer: 'principal:bench',
    to: null,
    idem: null,
    body: `{"t":${performance.now()},"text":"${PAD}"}`,
  };
}

const sentAt = (body: string) => Number(body.slice(5, body.indexOf(',')));

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.floor(q * (sorted.length - 1))] ?? Number.NaN;

/** The store's own path: appends through `writer`, tails on `reader`. */
export function storePath(writer: LogStore, reader: LogStore): TailPath {
  return {
    write: async (stream, record) => {
      await writer.append({ stream, records: [record], key: null, fingerprint: '' });
    },
    follow: async (stream, seen, signal) => {
      for await (const record of reader.tail(stream, { from: 1, signal })) seen(record.body);
    },
  };
}

/** Latency of `tails` tails over `streams` sessions, `rate` records/s for `seconds`. */
export async function tailLatency(
  path: TailPath,
  shape: { readonly streams: number; readonly tails: number },
  load: { readonly rate: number; readonly seconds: number },
): Promise<Latency> {
  const names = Array.from({ length: shape.streams }, () => `bench-${randomUUID()}`);
  const abort = new AbortController();
  const samples: number[] = [];
  const tails = Array.from({ length: shape.tails }, (_, i) =>
    path.follow(
      names[i % shape.streams] ?? '',
      (body) => samples.push(performance.now() - sentAt(body)),
      abort.signal,
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const appends: Promise<void>[] = [];
  const appendTimes: number[] = [];
  const started = performance.now();
  let sent = 0;
  while (performance.now() - started < load.seconds * 1000) {
    const due = Math.floor(((performance.now() - started) * load.rate) / 1000);
    for (; sent < due; sent++) {
      const called = performance.now();
      const stream = names[sent % shape.streams] ?? '';
      appends.push(
        path.write(stream, pendingRecord()).then(() => {
          appendTimes.push(performance.now() - called);
        }),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(appends);
  const expected = sent * (shape.tails / shape.streams);
  const deadline = performance.now() + 5000;
  while (samples.length < expected && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  loop.disable();
  abort.abort();
  await Promise.all(tails);
  const sorted = samples.sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: quantile(sorted, 1),
    appendP99: quantile(
      appendTimes.sort((a, b) => a - b),
      0.99,
    ),
    loopP99: loop.percentile(99) / 1e6,
    delivered: samples.length,
    expected,
  };
}
