/**
 * Every section 7 condition of the install-key session routes (POST and GET /sessions,
 * GET /sessions/{id}/token, POST /sessions/{id}/archive) with its status and code, in the
 * precedence of decisions row 83.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { flowOf, type TestInstall } from '../../support/flow.ts';
import { SessionClient, type Opened } from './session-client.ts';

let harness: TestApp;
let client: SessionClient;
let install: TestInstall;
let other: TestInstall;

beforeAll(async () => {
  harness = await startTestApp();
  client = await SessionClient.listen(harness);
  install = await flowOf(harness).install();
  other = await flowOf(harness).install();
});
afterAll(async () => {
  await harness.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('POST /sessions', () => {
  const open = (query: string, headers: Record<string, string>, body?: unknown) =>
    ({ method: 'POST', path: `/sessions${query}`, headers, body }) as const;

  it('refuses a missing or overlong principal (400)', async () => {
    const missing = await client.refused(open('', install.headers), 400, 'invalid_request');
    expect(missing.field).toBe('query.principal');
    const long = await client.refused(
      open(`?principal=${'p'.repeat(257)}`, install.headers),
      400,
      'invalid_request',
    );
    expect(long.field).toBe('query.principal');
  });

  it('refuses an invalid body naming the field (400), before the key is read', async () => {
    const rounds = await client.refused(
      open('?principal=ada', {}, { rounds: 0 }),
      400,
      'invalid_request',
    );
    expect(rounds.field).toBe('body.rounds');
    const temperature = await client.refused(
      open('?principal=ada', install.headers, { params: { temperature: 3 } }),
      400,
      'invalid_request',
    );
    expect(temperature.field).toBe('body.params.temperature');
    const key = await client.refused(
      open('?principal=ada', install.headers, {
        executor: {
          name: 'runner',
          public_key: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n',
        },
      }),
      400,
      'invalid_request',
    );
    expect(key.field).toBe('body.executor.public_key');
  });

  it('accepts an executor whose Ed25519 JWK imports', async () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: randomBytes(32).toString('base64url') };
    const opened = await client.open(install, 'ada', {
      executor: { name: 'runner', public_key: jwk },
    });
    const [first] = await harness.stores.log.read(opened.session, { from: 1 });
    expect(JSON.parse(first?.body ?? '{}')).toMatchObject({ executor: { name: 'runner' } });
  });

  it('refuses no install key or an unanswered one (401)', async () => {
    await client.refused(open('?principal=ada', {}), 401, 'unauthenticated');
    const forged = `ik_${randomBytes(32).toString('base64url')}`;
    await client.refused(
      open('?principal=ada', { authorization: `Bearer ${forged}` }),
      401,
      'invalid_token',
    );
  });

  it('answers 404 once the install is gone', async () => {
    const gone = await flowOf(harness).install();
    // The owner deletes it in the console (4.4); its key reads as gone (row 76).
    await flowOf(harness).expect(204, 'DELETE', `/installs/${gone.id}`, gone.owner.token);
    await client.refused(open('?principal=ada', gone.headers), 404, 'install_gone');
  });
});

describe('GET /sessions', () => {
  const list = (query: string, headers: Record<string, string> = install.headers) =>
    ({ method: 'GET', path: `/sessions${query}`, headers }) as const;

  it('refuses a limit of 0, a limit that is no integer and a bad after (400)', async () => {
    expect((await client.refused(list('?limit=0'), 400, 'invalid_request')).field).toBe(
      'query.limit',
    );
    expect((await client.refused(list('?limit=ten'), 400, 'invalid_request')).field).toBe(
      'query.limit',
    );
    expect((await client.refused(list('?after=bm9wZQ'), 400, 'invalid_request')).field).toBe(
      'query.after',
    );
  });

  it('clamps a limit above 200 and refuses no key (401)', async () => {
    expect((await client.call(list('?limit=5000'))).status).toBe(200);
    await client.refused(list('', {}), 401, 'unauthenticated');
  });
});

describe('GET /sessions/{id}/token', () => {
  let session: Opened;
  beforeAll(async () => {
    session = await client.open(install, 'ada');
  });
  const token = (
    id: string,
    query = '?principal=ada',
    headers: Record<string, string> = install.headers,
  ) => ({ method: 'GET', path: `/sessions/${id}/token${query}`, headers }) as const;

  it('refuses ids of neither 64 nor 72 hex and a missing principal (400)', async () => {
    for (const id of [hex(5), `${session.session}0`, session.session.slice(1), 'z'.repeat(72)]) {
      const problem = await client.refused(token(id), 400, 'invalid_request');
      expect(problem.field).toBe('params.id');
    }
    expect((await client.refused(token(session.session, ''), 400, 'invalid_request')).field).toBe(
      'query.principal',
    );
  });

  it("answers 404 for a 64-hex id, an unknown id and another install's session", async () => {
    await client.refused(token(hex(32)), 404, 'session_not_found');
    await client.refused(token(hex(36)), 404, 'session_not_found');
    await client.refused(
      token(session.session, '?principal=ada', other.headers),
      404,
      'session_not_found',
    );
  });

  it('refuses no install key (401) before anything about the id', async () => {
    await client.refused(token(hex(32), '?principal=ada', {}), 401, 'unauthenticated');
  });
});

describe('POST /sessions/{id}/archive', () => {
  it("refuses no key (401) and answers 404 for another install's, unknown or malformed ids", async () => {
    const session = await client.open(install, 'ada');
    const archive = (id: string, headers: Record<string, string>) =>
      ({ method: 'POST', path: `/sessions/${id}/archive`, headers }) as const;
    await client.refused(archive(session.session, {}), 401, 'unauthenticated');
    await client.refused(archive(session.session, other.headers), 404, 'session_not_found');
    await client.refused(archive(hex(36), install.headers), 404, 'session_not_found');
    await client.refused(archive('nope', install.headers), 404, 'session_not_found');
    expect((await harness.stores.log.head(session.session))?.archived).toBe(false);
  });
});
