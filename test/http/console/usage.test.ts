/**
 * `GET /usage` (2.15; decisions rows 52, 53) over usage the service counted itself:
 * sessions opened, talked to and archived on given UTC days (a hand-moved clock), each
 * counted at its archive. The rows must say what the owner's audit of those sessions
 * holds. How the stores add deltas up is the conformance suite's
 * (test/contracts/control-store-records.contract.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import type { TailLine } from '../../../src/schemas/records.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner } from '../../support/console.ts';
import { flowOf, type Owner } from '../../support/flow.ts';
import {
  ConsoleClient,
  expectOk,
  expectProblem,
  oneMember,
  type Caller,
} from './console-client.ts';

const clock = new ManualClock(Date.UTC(2026, 2, 1, 9));
let harness: TestApp;
let client: ConsoleClient;

beforeAll(async () => {
  harness = await startTestApp({ clock });
  client = await ConsoleClient.of(harness);
});
afterAll(async () => {
  await harness.close();
});

function usage(caller: Caller, query: string) {
  return client.call({ method: 'GET', url: `/usage${query}`, headers: caller.headers });
}

interface Row {
  day: string;
  bytes_archived: number;
  events: number;
  sessions_checkpointed: number;
  tokens: Record<string, { input: number; output: number }>;
  tool_calls: Record<string, number>;
}

/** Reads the lines of a JSON stream answer. */
const linesOf = (body: string): TailLine[] =>
  body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TailLine);

/** Waits until `check` holds of what `read` answers. */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`never got there: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * On `day` (YYYY-MM-DD, 09:00 UTC on the clock): a session of `owner`'s tenant where ada
 * says hello, the turn answers, and the install archives it. Answers what its audit
 * counts for usage (events, bytes and tokens of its records).
 */
async function sessionOn(who: Owner, day: string): Promise<Row> {
  clock.set(Date.parse(`${day}T09:00:00Z`));
  const flow = flowOf(harness);
  // Console tokens are short-lived: the owner signs in again on the day.
  const owner = await flow.signIn(who.user, who.tenant);
  const install = await flow.install({ owner });
  const opened = (await flow.expect(201, 'POST', '/sessions?principal=ada', install.key, {})) as {
    session: string;
    token: string;
  };
  const events = `/sessions/${opened.session}/events`;
  await flow.expect(200, 'POST', events, opened.token, [
    { kind: { name: 'message.submitted', version: 1 }, body: { text: `hello on ${day}` } },
  ]);
  const read = async () => {
    const { head } = (await flow.expect(
      200,
      'GET',
      `/sessions/${opened.session}/status`,
      opened.token,
    )) as {
      head: number;
    };
    const answer = await harness.app.inject({
      method: 'GET',
      url: `${events}?from=1&to=${head + 1}`,
      headers: { authorization: `Bearer ${opened.token}` },
    });
    return linesOf(answer.body);
  };
  await until(read, (lines) =>
    lines.some((l) => 'Ok' in l && l.Ok.envelope.kind.name === 'turn.ended'),
  );
  await flow.expect(200, 'POST', `/sessions/${opened.session}/archive`, install.key);
  const audit = await harness.app.inject({
    method: 'GET',
    url: `/console/sessions/${opened.session}/events?opened=1`,
    headers: owner.headers,
  });
  const row: Row = {
    day,
    bytes_archived: 0,
    events: 0,
    sessions_checkpointed: 1,
    tokens: {},
    tool_calls: {},
  };
  for (const line of linesOf(audit.body)) {
    if (!('Ok' in line)) continue;
    row.events += 1;
    row.bytes_archived += line.Ok.envelope.size;
    const body = line.Ok.body as { model?: string; usage?: { input: number; output: number } };
    if (line.Ok.envelope.kind.name === 'model.output' && body.model !== undefined) {
      const before = row.tokens[body.model] ?? { input: 0, output: 0 };
      row.tokens[body.model] = {
        input: before.input + (body.usage?.input ?? 0),
        output: before.output + (body.usage?.output ?? 0),
      };
    }
  }
  return row;
}

/** Two counts of one day as one row. */
function sum(a: Row, b: Row): Row {
  const tokens = { ...a.tokens };
  for (const [model, t] of Object.entries(b.tokens)) {
    const before = tokens[model] ?? { input: 0, output: 0 };
    tokens[model] = { input: before.input + t.input, output: before.output + t.output };
  }
  return {
    day: a.day,
    bytes_archived: a.bytes_archived + b.bytes_archived,
    events: a.events + b.events,
    sessions_checkpointed: a.sessions_checkpointed + b.sessions_checkpointed,
    tokens,
    tool_calls: {},
  };
}

describe('GET /usage', () => {
  it("answers the owner's rows of the range, both days inclusive, days without usage left out", async () => {
    const owner = await newOwner(harness);
    const other = await newOwner(harness);
    const first = await sessionOn(owner, '2026-03-01');
    const third = sum(await sessionOn(owner, '2026-03-03'), await sessionOn(owner, '2026-03-03'));
    await sessionOn(other, '2026-03-04');
    const fifth = await sessionOn(owner, '2026-03-05');
    await sessionOn(owner, '2026-03-06');
    const expected = [first, third, fifth];
    // Counting runs after the archive lands: wait for the last session of the range.
    const now = await flowOf(harness).signIn(owner.user, owner.tenant);
    const rows = await until(
      async () => expectOk(await usage(now, '?from=2026-03-01&to=2026-03-05'), 200) as Row[],
      (answer) => answer.reduce((n, row) => n + row.sessions_checkpointed, 0) === 4,
    );
    expect(rows).toEqual(expected);
    expect(expectOk(await usage(now, '?from=2026-03-04&to=2026-03-04'), 200)).toEqual([]);
  });

  it('accepts a range of 366 days and refuses 367 with 400 naming to', async () => {
    const owner = await newOwner(harness);
    expectOk(await usage(owner, '?from=2025-01-01&to=2026-01-01'), 200);
    expectProblem(
      await usage(owner, '?from=2025-01-01&to=2026-01-02'),
      400,
      'invalid_request',
      'query.to',
    );
  });

  it('refuses missing, malformed and reversed days with 400 naming the field', async () => {
    const owner = await newOwner(harness);
    const cases: [string, string][] = [
      ['', 'query.from'],
      ['?from=2026-01-01', 'query.to'],
      ['?to=2026-01-01', 'query.from'],
      ['?from=2026-1-1&to=2026-01-02', 'query.from'],
      ['?from=2026-01-01&to=2026-02-30', 'query.to'],
      ['?from=2026-01-02&to=2026-01-01', 'query.from'],
    ];
    for (const [query, field] of cases) {
      expectProblem(await usage(owner, query), 400, 'invalid_request', field);
    }
    // The query is checked before the credential.
    expectProblem(await usage({ headers: {} }, '?from=x&to=y'), 400, 'invalid_request');
  });

  it('refuses a member with 403 and a missing token with 401', async () => {
    const owner = await newOwner(harness);
    const member = await oneMember(harness, owner);
    expectProblem(await usage(member, '?from=2026-01-01&to=2026-01-02'), 403, 'not_owner');
    expectProblem(
      await usage({ headers: {} }, '?from=2026-01-01&to=2026-01-02'),
      401,
      'unauthenticated',
    );
  });
});
