import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_TOKEN_TTL_MS } from '../../../src/console/caller.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, setMembers } from '../../support/console.ts';
import { startOidcIssuer, type OidcIssuer } from '../../console/oidc-issuer.ts';
import { ConsoleClient, expectOk, expectProblem } from './console-client.ts';

const AUDIENCE = 'console-client';

interface TokenAnswer {
  token: string;
  expires: number;
  user: string;
}

let issuer: OidcIssuer;
let harness: TestApp;
let client: ConsoleClient;

beforeAll(async () => {
  issuer = await startOidcIssuer();
  // Both ways in at once: with an issuer the operator grant must be turned on explicitly.
  harness = await startTestApp({
    consoleOidc: { issuer: issuer.issuer, audience: AUDIENCE },
    operatorGrant: true,
  });
  client = await ConsoleClient.of(harness);
});
afterAll(async () => {
  await harness.close();
  await issuer.close();
});

function operatorHeaders(): Record<string, string> {
  return { authorization: `Bearer ${String(harness.keys.generatedOperatorToken)}` };
}

const freshTenant = () => `t-${randomUUID().slice(0, 8)}`;
const freshUser = () => `u-${randomUUID()}`;

function operatorGrant(payload: unknown, headers = operatorHeaders()) {
  return client.call({ method: 'POST', url: '/console/token', headers, payload });
}

function exchange(payload: unknown) {
  return client.call({ method: 'POST', url: '/console/token', payload });
}

describe('POST /console/token, the operator grant', () => {
  it('mints a one-hour console token naming the user and the tenant', async () => {
    const user = freshUser();
    const tenant = freshTenant();
    const before = Date.now();
    const answer = expectOk(await operatorGrant({ user, tenant }), 200) as TokenAnswer;
    expect(answer.user).toBe(user);
    expect(answer.expires).toBeGreaterThanOrEqual(
      Math.floor((before + CONSOLE_TOKEN_TTL_MS) / 1000) * 1000,
    );
    expect(answer.expires).toBeLessThanOrEqual(Date.now() + CONSOLE_TOKEN_TTL_MS);
    const verified = await harness.deps.tokens.verify(answer.token, 'console');
    // A token answer is never cached.
    const again = await operatorGrant({ user, tenant });
    expect(again.headers['cache-control']).toBe('no-store');
    expect(verified).toMatchObject({ sub: `console:${user}`, tid: tenant, aud: 'console' });
    // The token is no session token.
    await expect(harness.deps.tokens.verify(answer.token, 'session')).rejects.toThrow();
  });

  it('refuses a missing operator token with 401 and a bare Bearer challenge', async () => {
    const answer = await operatorGrant({ user: freshUser(), tenant: freshTenant() }, {});
    expectProblem(answer, 401, 'unauthenticated');
    expect(answer.headers['www-authenticate']).toBe('Bearer');
  });

  it('refuses a wrong operator token and a non-bearer header with invalid_token', async () => {
    const payload = { user: freshUser(), tenant: freshTenant() };
    for (const authorization of [`Bearer op_${'A'.repeat(43)}`, 'Basic b3A6b3A=']) {
      const answer = await operatorGrant(payload, { authorization });
      expectProblem(answer, 401, 'invalid_token');
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    }
  });

  it('refuses a console token as the operator token', async () => {
    const owner = await newOwner(harness);
    const answer = await operatorGrant({ user: owner.user, tenant: owner.tenant }, owner.headers);
    expectProblem(answer, 401, 'invalid_token');
  });

  it('checks the body before the credential (syntax 400 comes first)', async () => {
    expectProblem(
      await operatorGrant({ user: freshUser(), tenant: 'Not A Tenant' }, {}),
      400,
      'invalid_request',
      'body.tenant',
    );
    expectProblem(
      await operatorGrant({ user: '', tenant: freshTenant() }),
      400,
      'invalid_request',
      'body.user',
    );
    expectProblem(await operatorGrant({ tenant: freshTenant() }), 400, 'invalid_request', 'body');
    expectProblem(
      await client.call({
        method: 'POST',
        url: '/console/token',
        headers: { ...operatorHeaders(), 'content-type': 'application/json' },
        payload: '{"user": ',
      }),
      400,
      'malformed_json',
      'body',
    );
  });

  it('gives members of an existing tenant a token and refuses everyone else with 403', async () => {
    const owner = await newOwner(harness);
    const member = freshUser();
    await setMembers(harness, owner, [{ user: member, role: 'member' }]);
    expectOk(await operatorGrant({ user: member, tenant: owner.tenant }), 200);
    expectOk(await operatorGrant({ user: owner.user, tenant: owner.tenant }), 200);
    expectProblem(
      await operatorGrant({ user: freshUser(), tenant: owner.tenant }),
      403,
      'not_member',
    );
  });
});

describe('POST /console/token, the OpenID Connect exchange', () => {
  it('exchanges an ID token from the issuer for a console token of its sub', async () => {
    const sub = `oidc-${randomUUID()}`;
    const tenant = freshTenant();
    const subject_token = await issuer.mint(AUDIENCE, { sub });
    const answer = expectOk(await exchange({ subject_token, tenant }), 200) as TokenAnswer;
    expect(answer.user).toBe(sub);
    expect(await harness.deps.tokens.verify(answer.token, 'console')).toMatchObject({
      sub: `console:${sub}`,
      tid: tenant,
    });
    // That user can create the tenant and then owns it.
    const created = await client.call({
      method: 'PUT',
      url: '/console/tenant',
      headers: { authorization: `Bearer ${answer.token}` },
      payload: { name: 'Signed in with OIDC' },
    });
    expect(expectOk(created, 201)).toEqual({ outcome: 'created' });
    const memberships = await client.call({
      method: 'GET',
      url: '/console/memberships',
      headers: { authorization: `Bearer ${answer.token}` },
    });
    expect(expectOk(memberships, 200)).toEqual([{ tenant, role: 'owner' }]);
  });

  it('refuses ID tokens for another audience, from another issuer, expired or forged with 401', async () => {
    const tenant = freshTenant();
    const tokens = [
      await issuer.mint('another-client'),
      await issuer.mint(AUDIENCE, { iss: 'https://impostor.example' }),
      await issuer.mint(AUDIENCE, { expiresIn: -300 }),
      await issuer.mint(AUDIENCE, { foreignKey: true }),
      'eyJhbGciOiJub25lIn0.e30.',
    ];
    for (const subject_token of tokens) {
      const answer = await exchange({ subject_token, tenant });
      expectProblem(answer, 401, 'invalid_token');
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    }
  });

  it('refuses a verified user who is not a member of an existing tenant with 403', async () => {
    const owner = await newOwner(harness);
    const subject_token = await issuer.mint(AUDIENCE);
    expectProblem(await exchange({ subject_token, tenant: owner.tenant }), 403, 'not_member');
  });

  it('gives a verified member of an existing tenant a token', async () => {
    const owner = await newOwner(harness);
    const sub = `oidc-${randomUUID()}`;
    await setMembers(harness, owner, [{ user: sub, role: 'member' }]);
    const subject_token = await issuer.mint(AUDIENCE, { sub });
    expect(
      (expectOk(await exchange({ subject_token, tenant: owner.tenant }), 200) as TokenAnswer).user,
    ).toBe(sub);
  });
});

describe('POST /console/token with other OpenID Connect settings', () => {
  it('refuses the exchange with 401 when no issuer is configured', async () => {
    const bare = await startTestApp();
    try {
      const bareClient = await ConsoleClient.of(bare);
      const answer = await bareClient.call({
        method: 'POST',
        url: '/console/token',
        payload: { subject_token: await issuer.mint(AUDIENCE), tenant: freshTenant() },
      });
      expectProblem(answer, 401, 'invalid_token');
    } finally {
      await bare.close();
    }
  });

  it('checks the audience against the base URL when none is configured', async () => {
    const defaulted = await startTestApp({
      consoleOidc: { issuer: issuer.issuer, audience: undefined },
    });
    try {
      const defaultedClient = await ConsoleClient.of(defaulted);
      const call = async (audience: string) =>
        defaultedClient.call({
          method: 'POST',
          url: '/console/token',
          payload: { subject_token: await issuer.mint(audience), tenant: freshTenant() },
        });
      expectOk(await call(defaulted.deps.baseUrl), 200);
      expectProblem(await call(AUDIENCE), 401, 'invalid_token');
    } finally {
      await defaulted.close();
    }
  });

  it('answers 502 while the issuer does not answer', async () => {
    const subject_token = await issuer.mint(AUDIENCE);
    const fresh = await startTestApp({
      consoleOidc: { issuer: issuer.issuer, audience: AUDIENCE },
    });
    issuer.failWith = 503;
    try {
      const freshClient = await ConsoleClient.of(fresh);
      const answer = await freshClient.call({
        method: 'POST',
        url: '/console/token',
        payload: { subject_token, tenant: freshTenant() },
      });
      expectProblem(answer, 502, 'oidc_unavailable');
    } finally {
      issuer.failWith = undefined;
      await fresh.close();
    }
  });
});

describe('POST /console/token hardened', () => {
  it('turns the operator grant off when an issuer is configured, unless enabled', async () => {
    const oidcOnly = await startTestApp({
      consoleOidc: { issuer: issuer.issuer, audience: AUDIENCE },
    });
    try {
      const oidcClient = await ConsoleClient.of(oidcOnly);
      const grant = await oidcClient.call({
        method: 'POST',
        url: '/console/token',
        headers: { authorization: `Bearer ${String(oidcOnly.keys.generatedOperatorToken)}` },
        payload: { user: freshUser(), tenant: freshTenant() },
      });
      expectProblem(grant, 401, 'invalid_token');
      expect((grant.body as { message: string }).message).toContain('operator grant is off');
      const subject_token = await issuer.mint(AUDIENCE);
      const signedIn = await oidcClient.call({
        method: 'POST',
        url: '/console/token',
        payload: { subject_token, tenant: freshTenant() },
      });
      expectOk(signedIn, 200);
      expect(signedIn.headers['cache-control']).toBe('no-store');
    } finally {
      await oidcOnly.close();
    }
  });

  it("accepts only the pinned signing algorithms, whatever a token's header says", async () => {
    // The test issuer signs with ES256: pinned to RS256 alone, its good tokens are refused.
    const pinned = await startTestApp({
      consoleOidc: { issuer: issuer.issuer, audience: AUDIENCE, algorithms: ['RS256'] },
    });
    try {
      const pinnedClient = await ConsoleClient.of(pinned);
      const answer = await pinnedClient.call({
        method: 'POST',
        url: '/console/token',
        payload: { subject_token: await issuer.mint(AUDIENCE), tenant: freshTenant() },
      });
      expectProblem(answer, 401, 'invalid_token');
      expect((answer.body as { message: string }).message).toContain('algorithm');
    } finally {
      await pinned.close();
    }
    // The default set takes them.
    expectOk(
      await exchange({ subject_token: await issuer.mint(AUDIENCE), tenant: freshTenant() }),
      200,
    );
  });
});

describe('ID tokens and operator tokens never reach the log', () => {
  it('keeps both out of every log line', async () => {
    const subject_token = await issuer.mint(AUDIENCE);
    await exchange({ subject_token, tenant: freshTenant() });
    await operatorGrant({ user: freshUser(), tenant: freshTenant() });
    const log = harness.logs.text();
    expect(log).not.toContain(subject_token.split('.')[2]);
    expect(log).not.toContain(String(harness.keys.generatedOperatorToken));
  });
});
