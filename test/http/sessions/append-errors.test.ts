/**
 * Every section 7 condition of the session-token routes (POST /sessions/{id}/events and
 * GET /sessions/{id}/status) with its status and code, in the precedence of decisions
 * row 83, and the size limits of row 87.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionTokens } from '../../../src/sessions/tokens.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { flowOf, type TestInstall } from '../../support/flow.ts';
import { message, SessionClient, type Opened } from './session-client.ts';

let harness: TestApp;
let client: SessionClient;
let install: TestInstall;

beforeAll(async () => {
  // A 1 MiB request limit (row 87), so a record's own 256 KiB bound is what answers.
  harness = await startTestApp({ bodyLimit: 1024 * 1024 });
  client = await SessionClient.listen(harness);
  install = await flowOf(harness).install();
});
afterAll(async () => {
  await harness.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('POST /sessions/{id}/events', () => {
  let session: Opened;
  let tokens: SessionTokens;
  beforeAll(async () => {
    session = await client.open(install, 'ada');
    tokens = new SessionTokens({
      tokens: harness.deps.tokens,
      clock: harness.deps.clock,
      entropy: harness.deps.entropy,
    });
  });
  const append = (body: unknown, token = session.token, id = session.session, headers = {}) =>
    ({ method: 'POST', path: `/sessions/${id}/events`, token, body, headers }) as const;
  const head = async () => (await harness.stores.log.head(session.session))?.head;

  it('refuses malformed bodies, stamped fields and kinds not well formed (400)', async () => {
    const cases: [unknown, string][] = [
      [{ kind: { name: 'message.submitted', version: 1 }, body: {} }, 'body'],
      [[], 'body'],
      [[{ ...message('x'), cursor: 9 }], 'body.0.cursor'],
      [[{ ...message('x'), producer: 'service:turn' }], 'body.0.producer'],
      [[message('x'), { kind: { name: 'Message', version: 1 }, body: {} }], 'body.1.kind.name'],
      [[{ kind: { name: 'message', version: 1 }, body: {} }], 'body.0.kind.name'],
      [[{ kind: { name: 'message.submitted', version: 0 }, body: {} }], 'body.0.kind.version'],
      [[{ kind: { name: 'message.submitted', version: 1 } }], 'body.0.body'],
    ];
    for (const [body, field] of cases) {
      const problem = await client.refused(append(body, ''), 400, 'invalid_request');
      expect(problem.field, JSON.stringify(body)).toBe(field);
    }
    const raw = await client.call({
      method: 'POST',
      path: `/sessions/${session.session}/events`,
      token: session.token,
      raw: '[{"kind":',
    });
    expect(raw.status).toBe(400);
  });

  it('refuses a registered kind whose body does not fit, naming the field (400)', async () => {
    const problem = await client.refused(
      append([
        message('fine'),
        { kind: { name: 'message.submitted', version: 1 }, body: { text: '' } },
      ]),
      400,
      'invalid_request',
    );
    expect(problem.field).toBe('body.1.body.text');
  });

  it('refuses an Idempotency-Key that is not 1 to 255 visible characters (400)', async () => {
    for (const key of ['has space', 'k'.repeat(256)]) {
      const problem = await client.refused(
        append([message('x')], session.token, session.session, { 'idempotency-key': key }),
        400,
        'invalid_request',
      );
      expect(problem.field).toBe('headers.idempotency-key');
    }
  });

  it('refuses no token, a forged one and an install key (401)', async () => {
    await client.refused(
      { method: 'POST', path: `/sessions/${session.session}/events`, body: [message('x')] },
      401,
      'unauthenticated',
    );
    await client.refused(append([message('x')], `${session.token}x`), 401, 'invalid_token');
    await client.refused(append([message('x')], install.key), 401, 'invalid_token');
  });

  it('refuses a token for another session and ids that name no session (403)', async () => {
    const second = await client.open(install, 'ada');
    await client.refused(append([message('x')], second.token), 403, 'does_not_attach');
    for (const id of [hex(32), hex(4), 'not-an-id']) {
      await client.refused(append([message('x')], session.token, id), 403, 'does_not_attach');
    }
  });

  it('answers 404 for a token whose session does not exist', async () => {
    const id = hex(36);
    const minted = await tokens.mint({
      session: id,
      producer: 'principal:ada',
      tenant: install.tenant,
    });
    await client.refused(append([message('x')], minted.token, id), 404, 'session_not_found');
    // Row 83: the filter (403) outranks 404, which outranks a body that does not fit (400).
    const output = { kind: { name: 'model.output', version: 1 }, body: {} };
    await client.refused(append([output], minted.token, id), 403, 'filter_refused');
    await client.refused(append([message('')], minted.token, id), 404, 'session_not_found');
    expect(await harness.stores.log.head(id)).toBeNull();
  });

  it('refuses a kind the filter does not allow, naming its index, and lands nothing (403)', async () => {
    const before = await head();
    const output = { kind: { name: 'model.output', version: 1 }, body: {} };
    const problem = await client.refused(append([message('x'), output]), 403, 'filter_refused');
    expect(problem).toMatchObject({ index: 1, kind: { name: 'model.output', version: 1 } });
    expect(String(problem.reason)).toContain('principal:ada');
    for (const kind of [
      { name: 'weather.report', version: 1 },
      { name: 'message.submitted', version: 2 },
      { name: 'session.archived', version: 1 },
    ]) {
      const refused = await client.refused(append([{ kind, body: {} }]), 403, 'filter_refused');
      expect(refused).toMatchObject({ index: 0, kind });
    }
    expect(await head()).toBe(before);
  });

  it('answers 413 for 101 records and for a body over 256 KiB', async () => {
    const many = Array.from({ length: 101 }, (_, i) => message(`m${i}`));
    const problem = await client.refused(append(many), 413, 'too_many_records');
    expect(problem.field).toBe('body');
    const big = { kind: { name: 'weather.report', version: 1 }, body: { blob: 'x'.repeat(100) } };
    // An unregistered kind is refused by the filter first (403 before 413, row 83) …
    await client.refused(append([big]), 403, 'filter_refused');
    // … and a registered one past 256 KiB is a 413 naming the record.
    const text = message('y'.repeat(100_000));
    const padded = [message('ok'), message('€'.repeat(90_000))];
    const tooLarge = await client.refused(append(padded), 413, 'record_too_large');
    expect(tooLarge.field).toBe('body.1.body');
    const accepted = await client.append(session.session, session.token, [text], 'big');
    expect(accepted.status).toBe(200);
  });
});

describe('GET /sessions/{id}/status', () => {
  it('refuses no token (401), a grant (403 insufficient_scope) and another session (403)', async () => {
    const session = await client.open(install, 'ada');
    const second = await client.open(install, 'ada');
    const status = (token?: string, id = session.session) =>
      ({
        method: 'GET',
        path: `/sessions/${id}/status`,
        ...(token === undefined ? {} : { token }),
      }) as const;
    await client.refused(status(), 401, 'unauthenticated');
    const grant = await harness.deps.tokens.mint(
      'grant',
      { sub: 'executor:runner', sid: session.session, scp: ['complete'], tid: install.tenant },
      60_000,
    );
    const problem = await client.refused(status(grant.token), 403, 'insufficient_scope');
    expect(problem.status).toBe(403);
    await client.refused(status(second.token), 403, 'does_not_attach');
    await client.refused(status(session.token, hex(32)), 403, 'does_not_attach');
  });
});
