import { describe, expect, it } from 'vitest';
import { PutConnectionBody } from '../../src/schemas/connections.ts';
import {
  ConsoleTokenBody,
  PutSecretBody,
  PutTenantBody,
  UsageQuery,
} from '../../src/schemas/console.ts';
import { InferenceOption } from '../../src/schemas/inference.ts';
import { FilterRefusedProblem, PollProblem, Problem } from '../../src/schemas/problem.ts';
import { accepted, refusals } from './refusals.ts';

describe('GET /usage query (decisions row 54)', () => {
  const range = (from: string, to: string) => refusals(UsageQuery, { from, to }, 'query');

  it('takes one day, and 366 days counted inclusively', () => {
    expect(range('2024-03-01', '2024-03-01')).toEqual([]);
    expect(range('2024-01-01', '2024-12-31')).toEqual([]);
    expect(range('2023-03-01', '2024-02-29')).toEqual([]);
  });

  it('refuses 367 days, naming to', () => {
    expect(range('2024-01-01', '2025-01-01')).toEqual([
      { field: 'query.to', reason: 'must be at most 366 days from from, counted inclusively' },
    ]);
  });

  it('refuses from after to, naming from', () => {
    expect(range('2024-03-02', '2024-03-01')).toEqual([
      { field: 'query.from', reason: 'must not be after to' },
    ]);
  });

  it('refuses a day that is not a day and a missing one', () => {
    expect(range('2023-02-29', '2023-03-01')).toEqual([
      { field: 'query.from', reason: 'must be a day written YYYY-MM-DD' },
    ]);
    expect(range('2024-3-1', '2024-03-02')).toEqual([
      { field: 'query.from', reason: 'must be a day written YYYY-MM-DD' },
    ]);
    expect(refusals(UsageQuery, { from: '2024-03-01' }, 'query')).toEqual([
      { field: 'query.to', reason: 'is required' },
    ]);
  });
});

describe('inference option (2.13, decisions rows 48 to 51)', () => {
  it('fills compact_at 100000, retry {3, 1s} and no credential', () => {
    expect(accepted(InferenceOption, { provider: 'simulated' })).toEqual({
      provider: 'simulated',
      compact_at: 100_000,
      retry: { attempts: 3, backoff: '1s' },
      credential: null,
    });
  });

  it('refuses a provider other than simulated, and none', () => {
    expect(refusals(InferenceOption, { provider: 'openai' })).toEqual([
      { field: 'body.provider', reason: 'must be one of simulated' },
    ]);
    expect(refusals(InferenceOption, {})).toEqual([
      { field: 'body.provider', reason: 'must be one of simulated' },
    ]);
  });

  it('takes compact_at from 1024 and refuses 1023 or a fraction', () => {
    expect(refusals(InferenceOption, { provider: 'simulated', compact_at: 1024 })).toEqual([]);
    expect(refusals(InferenceOption, { provider: 'simulated', compact_at: 1023 })).toEqual([
      { field: 'body.compact_at', reason: 'must be at least 1024' },
    ]);
    expect(refusals(InferenceOption, { provider: 'simulated', compact_at: 2048.5 })).toEqual([
      { field: 'body.compact_at', reason: 'must be an integer' },
    ]);
  });

  it('bounds retry attempts at 1..10 and backoff at 100ms..1m', () => {
    const retry = (attempts: number, backoff: string) =>
      refusals(InferenceOption, { provider: 'simulated', retry: { attempts, backoff } });
    expect(retry(1, '100ms')).toEqual([]);
    expect(retry(10, '1m')).toEqual([]);
    expect(retry(0, '1s')).toEqual([{ field: 'body.retry.attempts', reason: 'must be 1 to 10' }]);
    expect(retry(11, '1s')).toEqual([{ field: 'body.retry.attempts', reason: 'must be 1 to 10' }]);
    expect(retry(3, '99ms')).toEqual([
      { field: 'body.retry.backoff', reason: 'must be a duration from 100ms to 1m' },
    ]);
    expect(retry(3, '61s')).toEqual([
      { field: 'body.retry.backoff', reason: 'must be a duration from 100ms to 1m' },
    ]);
    expect(refusals(InferenceOption, { provider: 'simulated', retry: { attempts: 3 } })).toEqual([
      { field: 'body.retry.backoff', reason: 'is required' },
    ]);
  });
});

describe('PUT /connections body (decisions row 44)', () => {
  const body = { name: 'crm', endpoint: 'https://mcp.example.com/mcp' };

  it('fills credential, result_limit and timeout with null', () => {
    expect(accepted(PutConnectionBody, body)).toEqual({
      ...body,
      credential: null,
      result_limit: null,
      timeout: null,
    });
  });

  it('takes http and https endpoints only', () => {
    expect(refusals(PutConnectionBody, { ...body, endpoint: 'http://127.0.0.1:9/mcp' })).toEqual(
      [],
    );
    for (const endpoint of ['ftp://example.com', 'not a url']) {
      expect(refusals(PutConnectionBody, { ...body, endpoint })).toEqual([
        { field: 'body.endpoint', reason: 'must be an http or https URL' },
      ]);
    }
    expect(refusals(PutConnectionBody, { name: 'crm' })).toEqual([
      { field: 'body.endpoint', reason: 'is required' },
    ]);
  });

  it('bounds the timeout and result_limit like a vendor tool', () => {
    expect(refusals(PutConnectionBody, { ...body, timeout: '16m', result_limit: 0 })).toEqual([
      { field: 'body.result_limit', reason: 'must be 1 to 1048576 bytes' },
      { field: 'body.timeout', reason: 'must be a duration from 1s to 15m' },
    ]);
  });
});

describe('console bodies (decisions rows 55, 73, 74)', () => {
  it('takes either console token request and refuses neither', () => {
    expect(refusals(ConsoleTokenBody, { subject_token: 'id-token', tenant: 't1' })).toEqual([]);
    expect(refusals(ConsoleTokenBody, { user: 'ada', tenant: 't1' })).toEqual([]);
    expect(refusals(ConsoleTokenBody, { tenant: 't1' })).toEqual([
      {
        field: 'body',
        reason: 'must be {subject_token, tenant} or, with the operator token, {user, tenant}',
      },
    ]);
  });

  it('refuses a tenant member with an unknown role and an empty secret', () => {
    const members = [
      { user: 'ada', role: 'owner' },
      { user: 'bob', role: 'admin' },
    ];
    expect(refusals(PutTenantBody, { name: 'Acme', members })).toEqual([
      { field: 'body.members.1.role', reason: 'must be owner or member' },
    ]);
    expect(refusals(PutSecretBody, { value: '' })).toEqual([
      { field: 'body.value', reason: 'must not be empty' },
    ]);
  });
});

describe('problem bodies (decisions rows 82, 85, 30)', () => {
  const base = {
    type: 'about:blank',
    title: 'Forbidden',
    status: 403,
    detail: 'refused',
    code: 'filter_refused',
    message: 'refused',
  };

  it('reads a problem with its field list and the filter refusal extension', () => {
    const errors = [{ field: 'body.0.kind', reason: 'is required' }];
    expect(refusals(Problem, { ...base, field: 'body.0.kind', reason: 'r', errors })).toEqual([]);
    const refusal = { ...base, index: 2, kind: { name: 'turn.started', version: 1 }, reason: 'x' };
    expect(refusals(FilterRefusedProblem, refusal)).toEqual([]);
    expect(refusals(FilterRefusedProblem, { ...refusal, index: -1 })).toEqual([
      { field: 'body.index', reason: 'must be at least 0' },
    ]);
  });

  it('reads the poll errors of RFC 8628', () => {
    const poll = { ...base, status: 400, code: 'slow_down', error: 'slow_down', interval: 10_000 };
    expect(refusals(PollProblem, poll)).toEqual([]);
    expect(refusals(PollProblem, { ...poll, error: 'access_denied' })).toEqual([]);
    expect(refusals(PollProblem, { ...poll, error: 'server_error' })).toEqual([
      {
        field: 'body.error',
        reason: 'must be one of authorization_pending, slow_down, expired_token, access_denied',
      },
    ]);
  });
});
