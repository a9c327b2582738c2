import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { ControlOAuthStore } from '../../src/connections/oauth-store.ts';
import type { PendingAuthorization } from '../../src/mcp/oauth-state.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import { openPostgresControlStore, openSqliteControlStore } from '../../src/storage/sql/open.ts';
import { createTestSchema, type TestSchema } from './sql/pg-schema.ts';

const secretsKey = randomBytes(32);
const ENDPOINT = 'http://127.0.0.1:4100/mcp';
const OTHER = 'http://127.0.0.1:4200/mcp';

function pending(tenant: string, connection: string, expires: number): PendingAuthorization {
  return {
    state: randomBytes(32).toString('base64url'),
    tenant,
    connection,
    endpoint: ENDPOINT,
    returnTo: 'https://console.example.test/back',
    verifier: `verifier-${randomUUID()}`,
    client: { client_id: 'client-1', client_secret: `cs-${randomUUID()}` },
    discovery: undefined,
    expires,
  };
}

/** Everything stored under kind oauth_state for a tenant, and the pending handles, as text. */
async function atRest(control: ControlStore, tenant: string): Promise<string> {
  const rows = [
    ...(await control.list('oauth_state', tenant)),
    ...(await control.list('oauth_state', '')),
  ];
  return JSON.stringify(rows);
}

let dir: string;
let schema: TestSchema;
let sqlite: ControlStore;
let postgres: ControlStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'oauth-store-'));
  sqlite = await openSqliteControlStore({ file: path.join(dir, 'control.db'), secretsKey });
  schema = await createTestSchema();
  postgres = await openPostgresControlStore({ url: schema.url, schema: schema.schema, secretsKey });
});
afterAll(async () => {
  await sqlite.close();
  await postgres.close();
  await schema.drop();
  await rm(dir, { recursive: true, force: true });
});

describe.each([['sqlite'], ['postgres']])('the sealed OAuth store on %s', (backend) => {
  const control = () => (backend === 'sqlite' ? sqlite : postgres);
  const clock = new ManualClock();
  const oauth = () => new ControlOAuthStore(control(), secretsKey, clock);
  const ref = () => ({ tenant: `t-${randomUUID()}`, connection: 'notes' });

  it('keeps clients and tokens per endpoint, sealed at rest', async () => {
    const r = ref();
    const store = oauth().forEndpoint(ENDPOINT);
    const secret = `cs-${randomUUID()}`;
    const access = `at-${randomUUID()}`;
    await store.saveClient(r, { client_id: 'c1', client_secret: secret });
    await store.saveTokens(r, {
      access_token: access,
      token_type: 'Bearer',
      refresh_token: 'rt-x',
    });
    expect(await store.loadClient(r)).toEqual({ client_id: 'c1', client_secret: secret });
    expect((await store.loadTokens(r))?.access_token).toBe(access);
    const raw = await atRest(control(), r.tenant);
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(access);
    expect(raw).not.toContain('rt-x');
    // Another endpoint sees nothing; a store without the key cannot open what it finds.
    expect(await oauth().forEndpoint(OTHER).loadTokens(r)).toBeUndefined();
    const stranger = new ControlOAuthStore(control(), randomBytes(32), clock).forEndpoint(ENDPOINT);
    await expect(stranger.loadTokens(r)).rejects.toThrow();
  });

  it('forgets tokens, clients, other endpoints and whole connections', async () => {
    const r = ref();
    const here = oauth().forEndpoint(ENDPOINT);
    const there = oauth().forEndpoint(OTHER);
    for (const store of [here, there]) {
      await store.saveClient(r, { client_id: 'c' });
      await store.saveTokens(r, { access_token: 'a', token_type: 'Bearer' });
    }
    await here.forget(r, 'tokens');
    expect(await here.loadTokens(r)).toBeUndefined();
    expect(await here.loadClient(r)).toEqual({ client_id: 'c' });
    await oauth().forgetOtherEndpoints(r, ENDPOINT);
    expect(await there.loadClient(r)).toBeUndefined();
    expect(await here.loadClient(r)).toEqual({ client_id: 'c' });
    const waiting = pending(r.tenant, r.connection, clock.now() + 60_000);
    await here.savePending(waiting);
    await oauth().forgetConnection(r);
    expect(await here.loadClient(r)).toBeUndefined();
    expect(await oauth().peekPending(waiting.state)).toBeUndefined();
  });

  it('takes a pending authorization once, even when two callbacks race for it', async () => {
    const r = ref();
    const store = oauth().forEndpoint(ENDPOINT);
    const waiting = pending(r.tenant, r.connection, clock.now() + 60_000);
    await store.savePending(waiting);
    const raw = await atRest(control(), r.tenant);
    expect(raw).not.toContain(waiting.verifier);
    expect(raw).not.toContain(String(waiting.client.client_secret));
    expect(await oauth().peekPending(waiting.state)).toEqual(waiting);
    const takes = await Promise.all([
      store.takePending(waiting.state),
      oauth().takePending(waiting.state),
    ]);
    expect(takes.filter((taken) => taken !== undefined)).toEqual([waiting]);
    expect(await store.takePending(waiting.state)).toBeUndefined();
  });

  it('drops a connection’s expired authorizations when it starts a new one', async () => {
    const r = ref();
    const store = oauth().forEndpoint(ENDPOINT);
    const old = pending(r.tenant, r.connection, clock.now() + 1000);
    const other = pending(r.tenant, 'other', clock.now() + 1000);
    await store.savePending(old);
    await store.savePending(other);
    clock.advance(1000);
    await store.savePending(pending(r.tenant, r.connection, clock.now() + 60_000));
    expect(await oauth().peekPending(old.state)).toBeUndefined();
    expect(await oauth().peekPending(other.state)).toEqual(other);
  });

  it('lets the retention sweep delete an expired authorization no one came back for', async () => {
    const r = ref();
    const store = oauth().forEndpoint(ENDPOINT);
    const abandoned = pending(r.tenant, r.connection, clock.now() + 1000);
    await store.savePending(abandoned);
    await control().purgeExpired(clock.now() + 999, 1000);
    expect(await oauth().peekPending(abandoned.state)).toEqual(abandoned);
    await control().purgeExpired(clock.now() + 1000, 1000);
    expect(await oauth().peekPending(abandoned.state)).toBeUndefined();
  });
});
