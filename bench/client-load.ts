/**
 * The loads of `npm run bench:client` (`client.ts`), each run once through the typed client
 * (`packages/client`) and once by hand with plain `fetch` and `WebSocket`, sending the same
 * requests: what the client adds is the difference.
 *
 * - Appends: WRITERS closed-loop writers, each on a session of its own, one record per
 *   call. The client's `session.append`; by hand, `fetch` with the same headers (bearer
 *   token, JSON body, a fresh `Idempotency-Key`) and the answer's JSON read.
 * - Tails: one session's records from cursor 1 to its head, read to the end. The client's
 *   `session.tail` over NDJSON and over WebSocket; by hand, a `fetch` whose body is split
 *   into lines and each parsed, and a `WebSocket` (token as the `bearer` subprotocol) whose
 *   every message is parsed.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type {
  Client,
  OfferedRecord,
  SessionClient,
  SessionGrant,
} from '../packages/client/src/index.ts';

/** A principal's record that lands and starts nothing: no turn is in flight to cancel. */
export const CANCEL: OfferedRecord = {
  kind: { name: 'turn.cancel', version: 1 },
  body: { turn: null },
};

/** What one run of a load measured. */
export interface Measured {
  /** Records per second over the run. */
  readonly rate: number;
  /** Per-call answer time p50, in ms (appends); 0 for tails. */
  readonly p50: number;
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** One writer's append, by the client or by hand. */
type Append = (grant: SessionGrant) => Promise<void>;

/** An append through the client: `Idempotency-Key`, retries, `ServiceProblem` on refusal. */
export function clientAppend(client: Client): Append {
  const sessions = new Map<string, SessionClient>();
  return async (grant) => {
    let session = sessions.get(grant.session);
    if (session === undefined) {
      session = client.session(grant);
      sessions.set(grant.session, session);
    }
    await session.append([CANCEL]);
  };
}

/** The same append with plain `fetch`: the same headers and body, the answer read. */
export function plainAppend(base: string): Append {
  const body = JSON.stringify([CANCEL]);
  return async (grant) => {
    const response = await fetch(`${base}/sessions/${grant.session}/events`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${grant.token}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body,
    });
    if (!response.ok) throw new Error(`append answered ${response.status}`);
    await response.json();
  };
}

/** One writer per grant, each appending in a closed loop for `seconds`. */
export async function appendLoad(
  append: Append,
  grants: readonly SessionGrant[],
  seconds: number,
): Promise<Measured> {
  const times: number[] = [];
  const began = performance.now();
  const end = began + seconds * 1000;
  await Promise.all(
    grants.map(async (grant) => {
      while (performance.now() < end) {
        const sent = performance.now();
        await append(grant);
        times.push(performance.now() - sent);
      }
    }),
  );
  const elapsed = (performance.now() - began) / 1000;
  times.sort((a, b) => a - b);
  return { rate: times.length / elapsed, p50: percentile(times, 50) };
}

/** A tail from cursor 1 to `to` (exclusive); answers the records it delivered. */
export type Tail = (grant: SessionGrant, to: number) => Promise<number>;

/** The client's tail over `transport`. */
export function clientTail(client: Client, transport: 'ndjson' | 'websocket'): Tail {
  return async (grant, to) => {
    let records = 0;
    for await (const record of client.session(grant).tail({ from: 1, to, transport })) {
      records += 1;
      if (record.envelope.cursor !== records) throw new Error('the tail skipped a cursor');
    }
    return records;
  };
}

/** Plain `fetch` of the NDJSON tail: the body split into lines, each parsed. */
export function plainNdjsonTail(base: string): Tail {
  return async (grant, to) => {
    const response = await fetch(`${base}/sessions/${grant.session}/events?from=1&to=${to}`, {
      headers: { authorization: `Bearer ${grant.token}`, accept: 'application/jsonstream' },
    });
    if (!response.ok || response.body === null) throw new Error(`tail ${response.status}`);
    let records = 0;
    let buffered = '';
    for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
      const lines = (buffered + chunk).split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') continue;
        if ('Ok' in (JSON.parse(line) as object)) records += 1;
      }
    }
    return records;
  };
}

/** A plain `WebSocket` on the same tail, each message parsed, until the service closes it. */
export function plainWebSocketTail(base: string): Tail {
  const wsBase = base.replace(/^http/, 'ws');
  return (grant, to) =>
    new Promise((resolve, reject) => {
      const url = `${wsBase}/sessions/${grant.session}/events?from=1&to=${to}`;
      const socket = new WebSocket(url, ['bearer', grant.token]);
      let records = 0;
      socket.addEventListener('message', (event: MessageEvent) => {
        if ('Ok' in (JSON.parse(String(event.data)) as object)) records += 1;
      });
      socket.addEventListener('close', (event: CloseEvent) => {
        if (event.code === 1000) resolve(records);
        else reject(new Error(`the tail closed with ${event.code}`));
      });
    });
}

/** Reads the tail `times` times; records per second over them all. */
export async function tailLoad(
  tail: Tail,
  grant: SessionGrant,
  to: number,
  times: number,
): Promise<Measured> {
  let records = 0;
  const began = performance.now();
  for (let i = 0; i < times; i += 1) {
    const delivered = await tail(grant, to);
    if (delivered !== to - 1) throw new Error(`a tail delivered ${delivered} of ${to - 1}`);
    records += delivered;
  }
  return { rate: records / ((performance.now() - began) / 1000), p50: 0 };
}
