/**
 * What the tail tests share: sessions made straight through the stores (a directory
 * record and `session.opened` at cursor 1), session tokens from the real minting code,
 * and real NDJSON and WebSocket clients over a listening server.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { WebSocket } from 'ws';
import type { TailLine } from '../../../src/schemas/records.ts';
import type { SessionValue } from '../../../src/resources/types.ts';
import { SessionTokens, type SessionScope } from '../../../src/sessions/tokens.ts';
import type { PendingRecord, StoredRecord } from '../../../src/storage/log-store.ts';
import type { TestApp } from '../../support/app.ts';

/** A session made for a test. */
export interface TestSession {
  readonly id: string;
  readonly tenant: string;
  readonly install: string;
}

/** Opens a session straight through the stores: directory record and session.opened. */
export async function openTestSession(harness: TestApp, tenant = `t-${randomUUID()}`) {
  const id = randomBytes(36).toString('hex');
  const install = `i-${randomUUID()}`;
  const value: SessionValue = {
    id,
    install,
    tenant,
    nonce: randomBytes(16).toString('base64url'),
    subject: null,
    opened: Date.now(),
    config: 'c'.repeat(64),
    archived: false,
    archivedAt: null,
  };
  await harness.stores.control.write([
    { op: 'put', kind: 'session', scope: '', id, value, expect: 0 },
  ]);
  await append(harness, id, [
    record('session.opened', { install, principal: 'ada', executor: null }, 'service:session'),
  ]);
  return { id, tenant, install } satisfies TestSession;
}

/** A record ready to land. */
export function record(
  kind: string,
  body: unknown,
  producer = 'principal:ada',
  to: string | null = null,
): PendingRecord {
  return { kind: { name: kind, version: 1 }, producer, to, idem: null, body: JSON.stringify(body) };
}

/** Lands records as one batch. */
export async function append(
  harness: TestApp,
  id: string,
  records: readonly PendingRecord[],
): Promise<StoredRecord[]> {
  const result = await harness.stores.log.append({
    stream: id,
    records,
    key: null,
    fingerprint: '',
  });
  return [...result.records];
}

/** Lands `session.archived` last. */
export async function archive(harness: TestApp, id: string): Promise<StoredRecord> {
  return harness.stores.log.archive(
    id,
    record('session.archived', { by: 'install' }, 'service:session'),
  );
}

/** A session token for `producer` on the session, minted by the real session token code. */
export async function tokenFor(
  harness: TestApp,
  session: TestSession,
  producer = 'principal:ada',
  scopes: readonly SessionScope[] = ['read', 'append'],
): Promise<string> {
  const tokens = new SessionTokens({
    tokens: harness.deps.tokens,
    clock: harness.deps.clock,
    entropy: harness.deps.entropy,
  });
  const minted = await tokens.mint({
    session: session.id,
    producer,
    tenant: session.tenant,
    scopes,
  });
  return minted.token;
}

/** A tail being read: the lines so far, and how it ended. */
export interface OpenTail {
  readonly lines: TailLine[];
  /** Settles when the tail has ended. */
  readonly done: Promise<void>;
  /** Ends the tail from the reader's side. */
  stop(): void;
}

/** Cursors of the Ok lines. */
export function cursors(lines: readonly TailLine[]): number[] {
  return lines.flatMap((line) => ('Ok' in line ? [line.Ok.envelope.cursor] : []));
}

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/** Reads an NDJSON tail; resolves once the answer's headers arrived. */
export async function ndjsonTail(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<OpenTail & { status: number; type: string }> {
  const lines: TailLine[] = [];
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${path}`, { headers, agent }, (response) => {
      let rest = '';
      response.setEncoding('utf8');
      const done = new Promise<void>((settle, fail) => {
        response.on('data', (chunk: string) => {
          rest += chunk;
          let at = rest.indexOf('\n');
          while (at >= 0) {
            lines.push(JSON.parse(rest.slice(0, at)) as TailLine);
            rest = rest.slice(at + 1);
            at = rest.indexOf('\n');
          }
        });
        response.on('end', () => {
          if (rest !== '') lines.push(JSON.parse(rest) as TailLine);
          settle();
        });
        response.on('error', fail);
        response.on('close', settle);
      });
      resolve({
        lines,
        done,
        stop: () => request.destroy(),
        status: response.statusCode ?? 0,
        type: String(response.headers['content-type']),
      });
    });
    request.on('error', reject);
  });
}

/** Reads a WebSocket tail; resolves once the socket is open. */
export async function wsTail(
  url: string,
  options: { headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<OpenTail & { socket: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
  const lines: TailLine[] = [];
  socket.on('message', (data: Buffer) => {
    lines.push(JSON.parse(data.toString('utf8')) as TailLine);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString('utf8') });
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => {
      resolve();
    });
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`upgrade refused: ${response.statusCode}`));
    });
  });
  return {
    lines,
    socket,
    closed,
    done: closed.then(() => undefined),
    stop: () => {
      socket.close();
    },
  };
}

/** Waits until `check` holds, polling; fails naming `what` after `ms`. */
export async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Settles `promise` or fails naming `what` after `ms`. */
export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`timed out waiting for ${what}`));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
