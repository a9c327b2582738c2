/**
 * Calls the console routes of a test app and checks every answer against the served
 * OpenAPI document (status, media type, body schema), keeping each body so a test can
 * prove no answer ever carried a secret value.
 */
import { randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { setMembers, type ConsoleUser } from '../../support/console.ts';
import { OpenApiCheck } from '../../support/openapi-check.ts';

export interface Answer {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly text: string;
  /** The parsed body, or undefined when there is none. */
  readonly body: unknown;
}

export interface Call {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly payload?: unknown;
}

/** Fetches the app's own OpenAPI document. */
export async function openApiDocument(harness: TestApp): Promise<Record<string, unknown>> {
  const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  return response.json();
}

export class ConsoleClient {
  readonly #harness: TestApp;
  readonly #check: OpenApiCheck;
  /** Every answer body seen, raw. */
  readonly texts: string[] = [];

  private constructor(harness: TestApp, check: OpenApiCheck) {
    this.#harness = harness;
    this.#check = check;
  }

  static async of(harness: TestApp): Promise<ConsoleClient> {
    return new ConsoleClient(harness, new OpenApiCheck(await openApiDocument(harness)));
  }

  /** Sends a request; the answer must be one the OpenAPI document describes. */
  async call(call: Call): Promise<Answer> {
    const response = await this.#harness.app.inject({
      method: call.method,
      url: call.url,
      headers: { ...call.headers },
      ...(call.payload === undefined ? {} : { payload: call.payload as object }),
    });
    this.texts.push(response.body);
    const body: unknown = response.body === '' ? undefined : JSON.parse(response.body);
    this.#check.answer(
      call.method,
      call.url,
      response.statusCode,
      response.headers['content-type'] ?? '',
      body,
    );
    return { status: response.statusCode, headers: response.headers, text: response.body, body };
  }
}

/** Asserts a problem answer with its status, code and (when given) field. */
export function expectProblem(answer: Answer, status: number, code: string, field?: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ status, code, ...(field === undefined ? {} : { field }) });
}

/** Asserts a successful answer with its status, answering its body. */
export function expectOk(answer: Answer, status: number): unknown {
  expect(answer.status, answer.text).toBe(status);
  return answer.body;
}

/** Who a console call is made as: a console user, or `{ headers: {} }` for nobody. */
export interface Caller {
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Makes `owner`'s tenant have exactly one more member, `role`, and answers that member's
 * console token (the member list is replaced, the owner staying owner).
 */
export async function oneMember(
  harness: TestApp,
  owner: ConsoleUser,
  role: 'owner' | 'member' = 'member',
): Promise<ConsoleUser> {
  const [member] = await setMembers(harness, owner, [{ user: `u-${randomUUID()}`, role }]);
  if (member === undefined) throw new Error('setMembers answered no token');
  return member;
}
