import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryOAuthStateStore } from '../../src/mcp/memory-oauth-store.ts';
import type { PendingAuthorization } from '../../src/mcp/oauth-state.ts';

const ref = () => ({ tenant: `t-${randomUUID()}`, connection: 'notes' });
const pending = (expires: number): PendingAuthorization => ({
  ...ref(),
  state: randomUUID(),
  endpoint: 'http://127.0.0.1:1/mcp',
  returnTo: 'https://sessions.example.test/console',
  verifier: 'v'.repeat(43),
  client: { client_id: randomUUID() },
  discovery: undefined,
  expires,
});

describe('the in-memory OAuth state store', () => {
  it('hands a pending authorization out once', async () => {
    const store = new MemoryOAuthStateStore();
    const handle = pending(1000);
    await store.savePending(handle);
    const [first, second] = await Promise.all([
      store.takePending(handle.state),
      store.takePending(handle.state),
    ]);
    expect([first, second].filter((taken) => taken !== undefined)).toEqual([handle]);
  });

  it('keeps credentials per connection, as copies, and forgets them by scope', async () => {
    const store = new MemoryOAuthStateStore();
    const mine = ref();
    const other = { ...mine, connection: 'mail' };
    const tokens = { access_token: 'at', token_type: 'Bearer' };
    await store.saveTokens(mine, tokens);
    await store.saveClient(mine, { client_id: 'c1' });
    tokens.access_token = 'changed';
    expect(await store.loadTokens(mine)).toEqual({ access_token: 'at', token_type: 'Bearer' });
    expect(await store.loadTokens(other)).toBeUndefined();
    await store.forget(mine, 'tokens');
    expect(await store.loadTokens(mine)).toBeUndefined();
    expect(await store.loadClient(mine)).toEqual({ client_id: 'c1' });
    await store.forget(mine, 'all');
    expect(await store.loadClient(mine)).toBeUndefined();
  });

  it('sweeps expired authorizations only', async () => {
    const store = new MemoryOAuthStateStore();
    const old = pending(1000);
    const fresh = pending(5000);
    await store.savePending(old);
    await store.savePending(fresh);
    expect(store.sweep(1000)).toBe(1);
    expect(await store.takePending(old.state)).toBeUndefined();
    expect(await store.takePending(fresh.state)).toEqual(fresh);
  });
});
