/**
 * The owner's audit of a session (§4.3, decisions row 70) over a session whose turn made a
 * real call through its executor. What no user can make land (a layer sealed under another
 * tenant's key, a body that is not JSON) is decided by the audit face itself, in
 * test/sessions/faces.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TailLine } from '../../../src/schemas/records.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, setMembers, type ConsoleUser } from '../../support/console.ts';
import { ARGS, RESULT, sessionWithCall, type SessionWithCall } from './call-fixture.ts';
import { archive } from './tail-fixture.ts';

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

/** A session of `who`'s tenant (the owner's by default) with one whole call. */
const callIn = (who: ConsoleUser = owner): Promise<SessionWithCall> =>
  sessionWithCall(harness, who);

/** The session's head now, as ada reads it. */
async function headOf(session: SessionWithCall): Promise<number> {
  const response = await harness.app.inject({
    method: 'GET',
    url: `/sessions/${session.id}/status`,
    headers: { authorization: `Bearer ${session.token}` },
  });
  return response.json<{ head: number }>().head;
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

/** The names of the records of `bodies`' lines, by cursor. */
function kindsOf(lines: readonly TailLine[]): Map<number, string> {
  const kinds = new Map<number, string>();
  for (const line of lines)
    if ('Ok' in line) kinds.set(line.Ok.envelope.cursor, line.Ok.envelope.kind.name);
  return kinds;
}

/** The cursor of the first record named `name`. */
function cursorOf(lines: readonly TailLine[], name: string): number {
  const found = [...kindsOf(lines)].find(([, kind]) => kind === name);
  if (found === undefined) throw new Error(`no ${name} in the audit`);
  return found[0];
}

describe('GET /console/sessions/{id}/events, plain', () => {
  it('serves a member the public records as Ok lines, sealed layers as digest and size', async () => {
    const session = await callIn();
    const head = await headOf(session);
    for (const query of ['', '?opened=0']) {
      const { response, lines } = await audit(session.id, member, query);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/jsonstream');
      const bodies = okBodies(lines);
      // Every record but those addressed to the executor.
      const expected = Array.from({ length: head }, (_, i) => i + 1).filter(
        (cursor) => !session.addressed.includes(cursor),
      );
      expect([...bodies.keys()]).toEqual(expected);
      // Ada's own message names the arguments; no record of the call shows them.
      const calls = lines.filter(
        (l) => 'Ok' in l && l.Ok.envelope.kind.name !== 'message.submitted',
      );
      const text = JSON.stringify(calls);
      expect(text).not.toContain(ARGS.word);
      expect(text).not.toContain('"gate"');
      const completed = bodies.get(cursorOf(lines, 'invoke.completed'));
      expect(completed?.result).toMatchObject({
        sealed: { digest: expect.stringMatching(/^hmac-sha256:/) as string },
      });
    }
  });

  it('reads a live session up to its head when the read began, and ends', async () => {
    const session = await callIn();
    const head = await headOf(session);
    const { lines } = await audit(session.id, owner);
    expect(session.addressed).toContain(session.cause);
    expect(lines.length).toBe(head - session.addressed.length);
  });
});

describe('GET /console/sessions/{id}/events?opened=1', () => {
  it('serves an owner every record of an ended session, layers opened, gate stripped', async () => {
    const session = await callIn();
    await archive(harness, session);
    const head = await headOf(session);
    const { response, lines } = await audit(session.id, owner, '?opened=1');
    expect(response.statusCode).toBe(200);
    const bodies = okBodies(lines);
    expect([...bodies.keys()]).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    const calls = bodies.get(cursorOf(lines, 'model.output'))?.tool_calls as Record<
      string,
      unknown
    >[];
    expect(calls[0]?.args).toEqual(ARGS);
    expect(bodies.get(session.cause)).toMatchObject({
      args: ARGS,
      call: 'call_1',
      target: 'executor:mailer',
    });
    expect(bodies.get(session.cause)).not.toHaveProperty('gate');
    expect(bodies.get(cursorOf(lines, 'invoke.completed'))?.result).toEqual(RESULT);
    expect(lines.at(-1)).toMatchObject({
      Ok: { envelope: { kind: { name: 'session.archived' } } },
    });
  });

  it('refuses a member with 403 and a live session with 409', async () => {
    const session = await callIn();
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
    const session = await callIn();
    for (const query of ['?opened=2', '?opened=true', '?opened=']) {
      const { response, problem } = await audit(session.id, owner, query);
      expect(response.statusCode, query).toBe(400);
      expect(problem.field).toBe('query.opened');
    }
  });

  it('a request without a console token, or with a session token, with 401', async () => {
    const session = await callIn();
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

  it('a user who is not a member of the existing tenant with 401', async () => {
    const session = await callIn();
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
    const theirs = await callIn(elsewhere);
    await archive(harness, theirs);
    const mine = await callIn();
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
