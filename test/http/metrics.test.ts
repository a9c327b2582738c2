/**
 * `GET /metrics` in the Prometheus text format, scraped after a short
 * load over real HTTP (an install through the public flow, a session, a tail, appends, a
 * turn on the simulated provider), and who may scrape it: loopback scrapers only by
 * default, the bearer of `METRICS_TOKEN` once it is set.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { listeningClient, vendorDocument, type TurnClient } from '../turns/turn-client.ts';

/** The value of the sample `name{labels}` (labels as the text format writes them). */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function scrape(base: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/metrics`, { headers });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
}

/** Reads an NDJSON tail until `lines` lines came; the caller aborts it. */
async function readLines(response: Response, lines: number): Promise<void> {
  if (response.body === null) throw new Error('the tail has no body');
  // A reader, not `for await`: leaving that loop would cancel the tail.
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (text.split('\n').length - 1 < lines) {
    const read = (await reader.read()) as { done: boolean; value?: Uint8Array };
    if (read.done) throw new Error('the tail ended');
    text += decoder.decode(read.value, { stream: true });
  }
  reader.releaseLock();
}

describe('GET /metrics on the default (no METRICS_TOKEN)', () => {
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    harness = await startTestApp();
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('counts appends, records, append latency, live tails and turns after a short load', async () => {
    const { key, owner } = await client.install();
    const opened = await client.open(key);
    const tailAbort = new AbortController();
    const tail = await fetch(`${client.base}/sessions/${opened.session}/events?from=1`, {
      headers: { authorization: `Bearer ${opened.token}` },
      signal: tailAbort.signal,
    });
    expect(tail.status).toBe(200);
    await client.send(opened, 'hello');
    await client.send(opened, 'again');
    await client.turnsEnded(opened, 2);
    // session.opened, two messages, and two turns of three records each.
    await readLines(tail, 9);

    const during = await scrape(client.base);
    expect(during.status).toBe(200);
    expect(during.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const { text } = during;
    const sqlite = '{backend="sqlite"}';
    expect(
      sample(text, 'agent_sessions_appends_total', '{backend="sqlite",outcome="landed"}'),
    ).toBe(2);
    expect(sample(text, 'agent_sessions_records_appended_total', sqlite)).toBe(2);
    expect(sample(text, 'agent_sessions_append_duration_seconds_count', sqlite)).toBe(2);
    expect(sample(text, 'agent_sessions_append_duration_seconds_sum', sqlite)).toBeGreaterThan(0);
    expect(
      sample(text, 'agent_sessions_append_duration_seconds_bucket', '{le="+Inf",backend="sqlite"}'),
    ).toBe(2);
    expect(sample(text, 'agent_sessions_tails_live', '{transport="ndjson"}')).toBe(1);
    expect(sample(text, 'agent_sessions_tails_live', '{transport="websocket"}')).toBe(0);
    expect(sample(text, 'agent_sessions_turns_total', '{outcome="completed"}')).toBe(2);
    expect(sample(text, 'agent_sessions_turns_total', '{outcome="failed"}')).toBe(0);
    expect(
      sample(text, 'agent_sessions_turn_duration_seconds_count', '{outcome="completed"}'),
    ).toBe(2);
    expect(sample(text, 'agent_sessions_session_states_live')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('# TYPE agent_sessions_actors_live gauge');
    expect(text).toContain('# TYPE agent_sessions_turn_drivers_live gauge');
    expect(sample(text, 'agent_sessions_store_errors_total', '{code="store_unavailable"}')).toBe(0);
    // No label names a customer.
    for (const id of [opened.session, owner.tenant, owner.user, key]) {
      expect(text).not.toContain(id);
    }

    tailAbort.abort();
    const deadline = Date.now() + 5_000;
    let live: number | undefined;
    do {
      live = sample(
        (await scrape(client.base)).text,
        'agent_sessions_tails_live',
        '{transport="ndjson"}',
      );
    } while (live !== 0 && Date.now() < deadline);
    expect(live).toBe(0);
  });

  it('answers a loopback scraper, and refuses any other peer and a forwarded request', async () => {
    const elsewhere = await harness.app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '203.0.113.7',
    });
    expect(elsewhere.statusCode).toBe(403);
    expect(elsewhere.json()).toMatchObject({ code: 'metrics_forbidden' });
    const forwarded = await scrape(client.base, { 'x-forwarded-for': '203.0.113.7' });
    expect(forwarded.status).toBe(403);
    expect((await scrape(client.base, { forwarded: 'for=203.0.113.7' })).status).toBe(403);
    expect((await scrape(client.base)).status).toBe(200);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  const token = randomBytes(32).toString('base64url');
  let harness: TestApp;

  beforeAll(async () => {
    harness = await startTestApp({ metricsToken: token });
  });
  afterAll(async () => {
    await harness.close();
  });

  const get = (remoteAddress: string, authorization?: string) =>
    harness.app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress,
      headers: authorization === undefined ? {} : { authorization },
    });

  it('answers the bearer of the token from any address, and no one else, loopback included', async () => {
    expect((await get('203.0.113.7', `Bearer ${token}`)).statusCode).toBe(200);
    expect((await get('127.0.0.1', `Bearer ${token}`)).statusCode).toBe(200);
    const none = await get('127.0.0.1');
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const wrong = await get('127.0.0.1', `Bearer ${randomBytes(32).toString('base64url')}`);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ code: 'invalid_token' });
  });

  it('counts a store failure a request met', async () => {
    const before = (await get('127.0.0.1', `Bearer ${token}`)).body;
    expect(sample(before, 'agent_sessions_store_errors_total', '{code="store_closed"}')).toBe(0);
    // The embedded store, closed under the app: the next write meets `store_closed`.
    await harness.stores.close();
    const proposal = await harness.app.inject({
      method: 'POST',
      url: '/appdoc',
      payload: vendorDocument(),
    });
    expect(proposal.statusCode, proposal.body).toBe(503);
    expect(proposal.json()).toMatchObject({ code: 'store_closed' });
    const after = (await get('127.0.0.1', `Bearer ${token}`)).body;
    expect(sample(after, 'agent_sessions_store_errors_total', '{code="store_closed"}')).toBe(1);
  });
});
