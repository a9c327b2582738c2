/**
 * What the tail tests share: sessions reached the way users reach them (an install by
 * consent, `POST /sessions`, appends and archives over the API, through `flow.ts`), tokens
 * minted by the real minting code for the credentials no user can ask for (another scope,
 * a short life), and real NDJSON and WebSocket clients over a listening server.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { WebSocket } from 'ws';
import type { Envelope, TailLine } from '../../../src/schemas/records.ts';
import { SessionTokens, type SessionScope } from '../../../src/sessions/tokens.ts';
import type { TestApp } from '../../support/app.ts';
import { flowOf, type Owner, type TestInstall } from '../../support/flow.ts';

/** A session opened for principal `ada` by an install made by consent. */
export interface TestSession {
  readonly id: string;
  readonly tenant: string;
  readonly install: TestInstall;
  /** Ada's session token (read and append). */
  readonly token: string;
}

/**
 * Opens a session for `ada` (`POST /sessions`) under a fresh install of `owner`'s tenant
 * (a fresh tenant when absent); `body` is the open body (an executor, say).
 */
export async function openTestSession(
  harness: TestApp,
  owner?: Owner,
  body: Record<string, unknown> = {},
): Promise<TestSession> {
  const flow = flowOf(harness);
  const install = await flow.install(owner === undefined ? {} : { owner });
  const opened = await flow.expect(201, 'POST', '/sessions?principal=ada', install.key, body);
  const { session, token } = opened as { session: string; token: string };
  return { id: session, tenant: install.tenant, install, token };
}

/** A record a principal lands (part D: `message.submitted` or `turn.cancel`). */
export function record(
  kind: string,
  body: unknown,
): { kind: { name: string; version: 1 }; body: unknown } {
  return { kind: { name: kind, version: 1 }, body };
}

/** Ada lands `records` as one batch (`POST /sessions/{id}/events`); answers their envelopes. */
export async function append(
  harness: TestApp,
  session: TestSession,
  records: readonly ReturnType<typeof record>[],
): Promise<Envelope[]> {
  const answer = await flowOf(harness).send(
    'POST',
    `/sessions/${session.id}/events`,
    session.token,
    records,
    { 'idempotency-key': randomUUID() },
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as Envelope[];
}

/** The install archives the session (`POST /sessions/{id}/archive`): `session.archived` lands last. */
export async function archive(harness: TestApp, session: TestSession): Promise<void> {
  await flowOf(harness).expect(200, 'POST', `/sessions/${session.id}/archive`, session.install.key);
}

/**
 * A session token for `producer` on the session. For a principal with the usual scopes,
 * the one the install asks for (`GET /sessions/{id}/token`); for any other producer or
 * scopes (credentials no user is handed), minted by the real session token code.
 */
export async function tokenFor(
  harness: TestApp,
  session: TestSession,
  producer = 'principal:ada',
  scopes?: readonly SessionScope[],
): Promise<string> {
  if (producer.startsWith('principal:') && scopes === undefined) {
    const principal = encodeURIComponent(producer.slice('principal:'.length));
    const path = `/sessions/${session.id}/token?principal=${principal}`;
    const answer = await flowOf(harness).expect(200, 'GET', path, session.install.key);
    return (answer as { token: string }).token;
  }
  const tokens = new SessionTokens({
    tokens: harness.deps.tokens,
    clock: harness.deps.clock,
    entropy: harness.deps.entropy,
  });
  const minted = await tokens.mint({
    session: session.id,
    producer,
    tenant: session.tenant,
    scopes: scopes ?? ['read', 'append'],
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
