import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner } from '../../support/console.ts';
import {
  ConsoleClient,
  expectOk,
  expectProblem,
  oneMember,
  type Caller,
} from './console-client.ts';

let harness: TestApp;
let client: ConsoleClient;

beforeAll(async () => {
  harness = await startTestApp();
  client = await ConsoleClient.of(harness);
});
afterAll(async () => {
  await harness.close();
});

function usage(caller: Caller, query: string) {
  return client.call({ method: 'GET', url: `/usage${query}`, headers: caller.headers });
}

async function checkpoint(tenant: string, day: string, events: number): Promise<void> {
  await harness.stores.control.addUsage(tenant, day, {
    events,
    bytesArchived: events * 100,
    sessionsCheckpointed: 1,
    tokens: { simulated: { input: events * 10, output: events * 2 } },
    toolCalls: { docs__search: events },
  });
}

describe('GET /usage', () => {
  it("answers the owner's rows of the range, both days inclusive, days without usage left out", async () => {
    const owner = await newOwner(harness);
    const other = await newOwner(harness);
    await checkpoint(owner.tenant, '2026-03-01', 1);
    await checkpoint(owner.tenant, '2026-03-03', 3);
    await checkpoint(owner.tenant, '2026-03-03', 4);
    await checkpoint(owner.tenant, '2026-03-05', 5);
    await checkpoint(owner.tenant, '2026-03-06', 6);
    await checkpoint(other.tenant, '2026-03-04', 99);
    const rows = expectOk(await usage(owner, '?from=2026-03-01&to=2026-03-05'), 200);
    expect(rows).toEqual([
      {
        day: '2026-03-01',
        bytes_archived: 100,
        events: 1,
        sessions_checkpointed: 1,
        tokens: { simulated: { input: 10, output: 2 } },
        tool_calls: { docs__search: 1 },
      },
      {
        day: '2026-03-03',
        bytes_archived: 700,
        events: 7,
        sessions_checkpointed: 2,
        tokens: { simulated: { input: 70, output: 14 } },
        tool_calls: { docs__search: 7 },
      },
      {
        day: '2026-03-05',
        bytes_archived: 500,
        events: 5,
        sessions_checkpointed: 1,
        tokens: { simulated: { input: 50, output: 10 } },
        tool_calls: { docs__search: 5 },
      },
    ]);
    expect(expectOk(await usage(owner, '?from=2026-03-04&to=2026-03-04'), 200)).toEqual([]);
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
