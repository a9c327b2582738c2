/**
 * What the session route tests share: a real HTTP client over a listening test app
 * (`fetch` on port 0) that checks every answer against the served OpenAPI document, and
 * the calls a session's life is made of.
 */
import { expect } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import type { TestInstall } from '../../support/flow.ts';
import { OpenApiCheck } from '../../support/openapi-check.ts';

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON body; undefined when there is none. */
  readonly body: unknown;
}

/** A problem body, as the tests read it. */
export interface ProblemBody {
  readonly code: string;
  readonly status: number;
  readonly field?: string;
  readonly reason?: string;
  readonly [extension: string]: unknown;
}

export interface Call {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly token?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** Raw body text, sent as application/json (for bodies `JSON.stringify` cannot make). */
  readonly raw?: string;
}

/** 2.9 */
export interface Opened {
  readonly session: string;
  readonly token: string;
  readonly expires: number;
}

export class SessionClient {
  readonly #base: string;
  readonly #check: OpenApiCheck;

  private constructor(base: string, check: OpenApiCheck) {
    this.#base = base;
    this.#check = check;
  }

  /** Listens on port 0 and reads the served OpenAPI document. */
  static async listen(harness: TestApp): Promise<SessionClient> {
    const base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const response = await fetch(`${base}/openapi.json`);
    expect(response.status).toBe(200);
    return new SessionClient(
      base,
      new OpenApiCheck((await response.json()) as Record<string, unknown>),
    );
  }

  /** Sends a request; the answer must be one the OpenAPI document describes. */
  async call(call: Call): Promise<Answer> {
    const headers: Record<string, string> = { ...call.headers };
    if (call.token !== undefined) headers.authorization = `Bearer ${call.token}`;
    const text = call.raw ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    if (text !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.#base}${call.path}`, {
      method: call.method,
      headers,
      ...(text === undefined ? {} : { body: text }),
    });
    const raw = await response.text();
    const body: unknown = raw === '' ? undefined : JSON.parse(raw);
    this.#check.answer(
      call.method,
      call.path,
      response.status,
      response.headers.get('content-type') ?? '',
      body,
    );
    return { status: response.status, headers: response.headers, body };
  }

  /** Calls and expects a problem with `status` and `code`; answers the problem. */
  async refused(call: Call, status: number, code: string): Promise<ProblemBody> {
    const answer = await this.call(call);
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = answer.body as ProblemBody;
    expect(problem.code, JSON.stringify(problem)).toBe(code);
    return problem;
  }

  /** `POST /sessions` for `principal`, expecting 201. */
  async open(install: TestInstall, principal = 'ada', body?: unknown): Promise<Opened> {
    const answer = await this.call({
      method: 'POST',
      path: `/sessions?principal=${encodeURIComponent(principal)}`,
      headers: install.headers,
      ...(body === undefined ? {} : { body }),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body as Opened;
  }

  /** `POST /sessions/{id}/events`. */
  append(
    session: string,
    token: string,
    records: unknown,
    idempotencyKey?: string,
  ): Promise<Answer> {
    return this.call({
      method: 'POST',
      path: `/sessions/${session}/events`,
      token,
      body: records,
      ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }),
    });
  }
}

/** A message.submitted offer. */
export function message(text: string): { kind: { name: string; version: number }; body: unknown } {
  return { kind: { name: 'message.submitted', version: 1 }, body: { text } };
}
