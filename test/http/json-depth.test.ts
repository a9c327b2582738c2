/**
 * A JSON body nested deeper than `MAX_JSON_DEPTH` is a 400 naming the
 * body, never a 500, wherever it arrives: on an append to a real session, opened through
 * the public flow, and on the unauthenticated `POST /appdoc`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, tooDeepAt } from '../../src/http/json-body.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { listeningClient, vendorDocument, type TurnClient } from '../turns/turn-client.ts';

let harness: TestApp;
let client: TurnClient;

beforeAll(async () => {
  harness = await startTestApp({ bodyLimit: 1024 * 1024 });
  client = await listeningClient(harness);
});
afterAll(async () => {
  await harness.close();
});

/** `levels` nested arrays around `inner`. */
const nested = (levels: number, inner = '1') =>
  `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;

async function post(path: string, text: string, token: string | null) {
  const response = await fetch(`${client.base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: text,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('a body nested too deep', () => {
  it('is a 400 too_deep on an append, 10,000 levels deep inside a record body', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    const record = `[{"kind":{"name":"message.submitted","version":1},"body":{"text":"hi","extra":${nested(10_000)}}}]`;
    const answer = await post(`/sessions/${opened.session}/events`, record, opened.token);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'too_deep', field: 'body', max_depth: 64 });
    // Nothing landed: the log still ends at session.opened.
    expect((await client.status(opened)).head).toBe(1);
  });

  it('is a 400 on the unauthenticated POST /appdoc, with objects as with arrays', async () => {
    const doc = vendorDocument();
    const deepSchema = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const text = JSON.stringify(doc).replace(
      '"output_schema":{"type":"object"}',
      `"output_schema":${deepSchema}`,
    );
    const answer = await post('/appdoc', text, null);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'too_deep', field: 'body' });
  });

  it('is named for its depth when it is also broken or holds a poisoned key', async () => {
    for (const text of [
      nested(10_000, '{"__proto__":{"polluted":true}}'),
      `${nested(10_000)},`,
      nested(65, '{"constructor":{"prototype":{"polluted":true}}}'),
    ]) {
      const answer = await post('/appdoc', text, null);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 'too_deep', field: 'body', max_depth: 64 });
    }
  });

  it('names the bracket that went past the bound', async () => {
    const answer = await post('/appdoc', `{"a":${nested(70)}}`, null);
    expect(answer.body).toMatchObject({ code: 'too_deep', position: 68 });
  });

  it('lets a body exactly at the bound through to validation', async () => {
    const answer = await post('/appdoc', nested(MAX_JSON_DEPTH), null);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request', field: 'body' });
  });
});

describe('tooDeepAt', () => {
  it('counts brackets outside strings only', () => {
    expect(tooDeepAt(nested(3), 3)).toBe(-1);
    expect(tooDeepAt(nested(4), 3)).toBe(3);
    expect(tooDeepAt(`["${'['.repeat(100)}", {"k\\"[": [1]}]`, 3)).toBe(-1);
    expect(tooDeepAt(`{"a":{"b":{"c":{}}}}`, 3)).toBe(15);
  });
});
