/**
 * A session with a whole tool call, reached the way users reach it: the install opens a
 * session with its executor `mailer`, ada asks the simulated model to call the vendor tool
 * (`/call lookup {…}`, decisions row 91), the service lands the model's output and the
 * call addressed to the executor, which claims and completes it, and the turn ends.
 */
import { expect } from 'vitest';
import type { TailLine } from '../../../src/schemas/records.ts';
import type { TestApp } from '../../support/app.ts';
import { executorSpec, executorToken, newExecutor, performCall } from '../../support/executor.ts';
import { flowOf, type Owner } from '../../support/flow.ts';
import { append, openTestSession, record, type TestSession } from './tail-fixture.ts';

/** The call's arguments and its result, sealed in the log (decisions part D). */
export const ARGS = { word: 'payroll-of-the-cfo' };
export const RESULT = { content: [{ type: 'text', text: 'salaries: redacted' }] };

/** A session whose one turn made and completed a call. */
export interface SessionWithCall extends TestSession {
  /** The executor `mailer`'s session token. */
  readonly executorToken: string;
  /** The cursor of the call's `invoke.allowed`. */
  readonly cause: number;
  /** The cursors of the records addressed to the executor (none other is addressed). */
  readonly addressed: readonly number[];
}

/** The records of a face: every line from cursor 1 to the head now, as `token` reads them. */
export async function readFace(
  harness: TestApp,
  session: TestSession,
  token: string,
): Promise<TailLine[]> {
  const flow = flowOf(harness);
  const status = await flow.expect(200, 'GET', `/sessions/${session.id}/status`, session.token);
  const { head } = status as { head: number };
  const response = await harness.app.inject({
    method: 'GET',
    url: `/sessions/${session.id}/events?from=1&to=${head + 1}`,
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TailLine);
}

/** The Ok lines of kind `name`. */
export function linesOf(lines: readonly TailLine[], name: string) {
  return lines.flatMap((line) =>
    'Ok' in line && line.Ok.envelope.kind.name === name ? [line.Ok] : [],
  );
}

async function until(
  harness: TestApp,
  session: TestSession,
  token: string,
  name: string,
): Promise<TailLine[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = await readFace(harness, session, token);
    if (linesOf(lines, name).length > 0) return lines;
    if (Date.now() > deadline) throw new Error(`no ${name} landed: ${JSON.stringify(lines)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Opens a session of `owner`'s tenant (a fresh one when absent) and runs one call in it. */
export async function sessionWithCall(harness: TestApp, owner?: Owner): Promise<SessionWithCall> {
  const flow = flowOf(harness);
  const mailer = await newExecutor('mailer');
  const session = await openTestSession(harness, owner, { executor: executorSpec(mailer) });
  const token = await executorToken(flow, harness.deps.baseUrl, mailer, session.id);
  await append(harness, session, [
    record('message.submitted', { text: `/call lookup ${JSON.stringify(ARGS)}` }),
  ]);
  const [allowed] = linesOf(
    await until(harness, session, token, 'invoke.allowed'),
    'invoke.allowed',
  );
  const cause = allowed?.envelope.cursor ?? 0;
  await performCall(flow, session.id, token, cause, RESULT);
  await until(harness, session, session.token, 'turn.ended');
  const addressed = (await readFace(harness, session, token)).flatMap((line) =>
    'Ok' in line && line.Ok.envelope.to !== null ? [line.Ok.envelope.cursor] : [],
  );
  return { ...session, executorToken: token, cause, addressed };
}
