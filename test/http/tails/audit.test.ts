import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TailLine } from '../../../src/schemas/records.ts';
import { sealLayer, tenantSealKey } from '../../../src/sessions/sealing.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, setMembers, type ConsoleUser } from '../../support/console.ts';
import { append, archive, openTestSession, record, type TestSession } from './tail-fixture.ts';

let harness: TestApp;
let owner: ConsoleUser;
let member: ConsoleUser;

beforeAll(async () => {
  harness = await startTestApp();
  owner = await newOwner(harness);
  [member] = (await setMembers(harness, owner, [
    { user: `m-${randomUUID()}`, role: 'member' },
  ])) as [ConsoleUser];
});
afterAll(async () => {
  await harness.close();
});

const args = { to: 'cfo@example.com', subject: 'Q3 numbers' };
const result = { content: [{ type: 'text', text: 'sent as message 7' }] };

/**
 * A session of the owner's tenant with a whole call: cursors 1 opened, 2 message, 3 model
 * output, 4 invoke.allowed (addressed, gated), 5 completion, 6 a completion sealed under
 * another tenant's key, 7 a record whose body is not JSON.
 */
async function sessionWithCall(tenant = owner.tenant): Promise<TestSession> {
  const session = await openTestSession(harness, tenant);
  const key = tenantSealKey(harness.deps.sealKey, tenant);
  const foreign = tenantSealKey(harness.deps.sealKey, `other-${tenant}`);
  await append(harness, session.id, [
    record('message.submitted', { text: 'mail the CFO' }),
    record(
      'model.output',
      {
        turn: 2,
        round: 1,
        text: null,
        tool_calls: [{ id: 'c1', name: 'send_mail', evidence: {}, args: sealLayer(args, key) }],
        stop: 'tool_use',
        model: 'simulated',
        usage: { input: 1, output: 1 },
      },
      'service:turn',
    ),
    record(
      'invoke.allowed',
      {
        turn: 2,
        cause: 3,
        call: 'c1',
        tool: 'send_mail',
        target: 'executor:mailer',
        args: sealLayer(args, key),
        evidence: {},
        timeout: 60_000,
        result_limit: 65_536,
        gate: 'eyJ.gate.sig',
      },
      'service:authorizer',
      'executor:mailer',
    ),
    record(
      'invoke.completed',
      { ok: true, result: sealLayer(result, key), error: null, truncated: false },
      'executor:mailer',
    ),
    record(
      'invoke.completed',
      { ok: true, result: sealLayer(result, foreign), error: null, truncated: false },
      'executor:mailer',
    ),
  ]);
  await harness.stores.log.append({
    stream: session.id,
    records: [
      {
        kind: { name: 'note.broken', version: 1 },
        producer: 'service:turn',
        to: null,
        idem: null,
        body: '{"oops":',
      },
    ],
    key: null,
    fingerprint: '',
  });
  return session;
}

async function audit(session: string, user: ConsoleUser | null, query = '') {
  const response = await harness.app.inject({
    method: 'GET',
    url: `/console/sessions/${session}/events${query}`,
    headers: user === null ? {} : user.headers,
  });
  const lines =
    response.statusCode === 200
      ? response.body
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as TailLine)
      : [];
  return {
    response,
    lines,
    problem: response.statusCode === 200 ? {} : response.json<Record<string, unknown>>(),
  };
}

function okBodies(lines: readonly TailLine[]): Map<number, Record<string, unknown>> {
  const bodies = new Map<number, Record<string, unknown>>();
  for (const line of lines) {
    if (!('Ok' in line)) throw new Error(`an audit serves Ok lines only: ${JSON.stringify(line)}`);
    bodies.set(line.Ok.envelope.cursor, line.Ok.body as Record<string, unknown>);
  }
  return bodies;
}

describe('GET /console/sessions/{id}/events, plain', () => {
  it('serves a member the public records as Ok lines, sealed layers as digest and size', async () => {
    const session = await sessionWithCall();
    for (const query of ['', '?opened=0']) {
      const { response, lines } = await audit(session.id, member, query);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/jsonstream');
      const bodies = okBodies(lines);
      expect([...bodies.keys()]).toEqual([1, 2, 3, 5, 6, 7]);
      const text = JSON.stringify(lines);
      expect(text).not.toContain('cfo@example.com');
      expect(text).not.toContain('message 7');
      expect(text).not.toContain('eyJ.gate.sig');
      expect(bodies.get(5)?.result).toMatchObject({
        sealed: { digest: expect.stringMatching(/^hmac-sha256:/) as string },
      });
      expect(bodies.get(7)).toEqual({ unreadable: { error: 'the record body is not JSON' } });
    }
  });

  it('reads a live session up to its head when the read began, and ends', async () => {
    const session = await sessionWithCall();
    const { lines } = await audit(session.id, owner);
    expect(lines.length).toBe(6);
  });
});

describe('GET /console/sessions/{id}/events?opened=1', () => {
  it('serves an owner every record of an ended session, layers opened, gate stripped', async () => {
    const session = await sessionWithCall();
    await archive(harness, session.id);
    const { response, lines } = await audit(session.id, owner, '?opened=1');
    expect(response.statusCode).toBe(200);
    const bodies = okBodies(lines);
    expect([...bodies.keys()]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const calls = bodies.get(3)?.tool_calls as Record<string, unknown>[];
    expect(calls[0]?.args).toEqual(args);
    expect(bodies.get(4)).toMatchObject({ args, call: 'c1', target: 'executor:mailer' });
    expect(bodies.get(4)).not.toHaveProperty('gate');
    expect(bodies.get(5)?.result).toEqual(result);
    expect(bodies.get(6)?.result).toEqual({
      unreadable: {
        digest: expect.stringMatching(/^hmac-sha256:/) as string,
        size: expect.any(Number) as number,
        error: expect.stringContaining('does not open') as string,
      },
    });
    expect(bodies.get(7)).toEqual({ unreadable: { error: 'the record body is not JSON' } });
    expect(lines.at(-1)).toMatchObject({
      Ok: { envelope: { kind: { name: 'session.archived' } } },
    });
  });

  it('refuses a member with 403 and a live session with 409', async () => {
    const session = await sessionWithCall();
    const byMember = await audit(session.id, member, '?opened=1');
    expect(byMember.response.statusCode).toBe(403);
    expect(byMember.problem.code).toBe('not_owner');
    const live = await audit(session.id, owner, '?opened=1');
    expect(live.response.statusCode).toBe(409);
    expect(live.problem.code).toBe('session_live');
  });
});

describe('GET /console/sessions/{id}/events refuses', () => {
  it('an opened value other than 0 or 1 with 400', async () => {
    const session = await sessionWithCall();
    for (const query of ['?opened=2', '?opened=true', '?opened=']) {
      const { response, problem } = await audit(session.id, owner, query);
      expect(response.statusCode, query).toBe(400);
      expect(problem.field).toBe('query.opened');
    }
  });

  it('a request without a console token, or with a session token, with 401', async () => {
    const session = await sessionWithCall();
    expect((await audit(session.id, null)).response.statusCode).toBe(401);
    const { token } = await harness.deps.tokens.mint(
      'session',
      { sub: 'principal:ada', sid: session.id, scp: ['read'] },
      60_000,
    );
    const asSession = await audit(session.id, {
      ...owner,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(asSession.response.statusCode).toBe(401);
  });

  it('a user who is not a member of the existing tenant with 401 (issue 14 item 4)', async () => {
    const session = await sessionWithCall();
    const outsider = `s-${randomUUID()}`;
    const { token } = await harness.deps.tokens.mint(
      'console',
      { sub: `console:${outsider}`, tid: owner.tenant },
      60_000,
    );
    const { response, problem } = await audit(session.id, {
      ...owner,
      user: outsider,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.statusCode).toBe(401);
    expect(problem.code).toBe('invalid_token');
  });

  it('a session of another tenant, an unknown id or an id of the wrong shape with 404', async () => {
    const elsewhere = await newOwner(harness);
    const theirs = await sessionWithCall(elsewhere.tenant);
    await archive(harness, theirs.id);
    const mine = await sessionWithCall();
    for (const id of [
      theirs.id,
      randomBytes(36).toString('hex'),
      mine.id.slice(0, 64),
      'x'.repeat(72),
    ]) {
      const { response, problem } = await audit(id, owner, '?opened=1');
      expect(response.statusCode, id).toBe(404);
      expect(problem.code).toBe('session_not_found');
    }
    // Their own owner reads it.
    expect((await audit(theirs.id, elsewhere, '?opened=1')).response.statusCode).toBe(200);
    // Precedence (decisions row 83): a member asking for the opened face is 403 before 404.
    expect((await audit(theirs.id, member, '?opened=1')).response.statusCode).toBe(403);
  });
});
