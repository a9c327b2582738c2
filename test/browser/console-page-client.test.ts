/**
 * The console calls the service through the typed client package
 * (`@agent-session-service/client`), served from this origin under `/console/client/`, as
 * any dashboard would: the page loads the client's modules, every call to the API but the
 * sign-in's own token exchange leaves from the client's transport, and every WebSocket
 * from the client's tail. Headless Chromium records where each call came from.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openConsole, signInWith, usePageHarness } from '../support/console-page.ts';

const h = usePageHarness();

/**
 * Notes, for every `fetch` and `WebSocket` of the page, its URL and the scripts on the
 * stack that made it (in the page, as text: the tests' TypeScript has no DOM types).
 */
const WATCH_CALLS = `{
  window.calls = [];
  const note = (url) => window.calls.push({ url: String(url instanceof Request ? url.url : url), stack: new Error().stack });
  const fetchNative = window.fetch;
  window.fetch = function (input, init) {
    note(input);
    return fetchNative.call(this, input, init);
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      note(url);
      super(url, protocols);
    }
  };
}`;

interface Call {
  readonly url: string;
  readonly stack: string;
}

const PAGE_DIR = new URL('../../src/http/console-page/', import.meta.url);

describe('the console and the typed client', () => {
  it('has no script of its own that reaches the network but through the client', () => {
    const scripts = readdirSync(PAGE_DIR).filter((file) => file.endsWith('.js'));
    expect(scripts).toContain('api.js');
    for (const file of scripts) {
      const source = readFileSync(new URL(file, PAGE_DIR), 'utf8');
      expect({
        file,
        direct: /\bfetch\s*\(|new WebSocket|XMLHttpRequest|EventSource/.test(source),
      }).toEqual({ file, direct: false });
    }
    // The console's calls are made by the client the shared sign-in loads.
    expect(readFileSync(new URL('api.js', PAGE_DIR), 'utf8')).toContain('PageSignIn.service()');
  });

  it('loads the client from this origin and makes every call through it', async () => {
    const install = await h.flow.install();
    const opened = (await h.flow.expect(
      201,
      'POST',
      '/sessions?principal=ivy',
      install.key,
      {},
    )) as {
      session: string;
    };
    const { page, problems, urls } = await openConsole(h, { init: WATCH_CALLS });
    await signInWith(h, page, install.owner);
    await page.locator(`#sessions tr[data-session="${opened.session}"] a`).click();
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.getByLabel(/Message as/).fill('through the client');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#log .record[data-kind="turn.ended"]').waitFor({ timeout: 10_000 });

    const requested = urls.map((url) => new URL(url).pathname);
    expect(requested).toEqual(
      expect.arrayContaining([
        '/console/client/index.ts',
        '/console/client/transport.ts',
        '/console/client/openapi-fetch.js',
      ]),
    );
    const calls = await page.evaluate<Call[]>('window.calls');
    const api = calls.filter((call) => new URL(call.url).pathname !== '/console/token');
    const paths = api.map((call) => `${new URL(call.url).protocol}${new URL(call.url).pathname}`);
    // Directory, session token, status, the append and the tail at least.
    expect(paths).toEqual(
      expect.arrayContaining([
        'http:/console/memberships',
        'http:/console/sessions',
        `http:/console/sessions/${opened.session}/token`,
        `http:/sessions/${opened.session}/status`,
        `http:/sessions/${opened.session}/events`,
        `ws:/sessions/${opened.session}/events`,
        'http:/console/statecharts/turn',
      ]),
    );
    for (const call of api) {
      const from = call.url.startsWith('ws:')
        ? '/console/client/lines.ts'
        : '/console/client/transport.ts';
      expect({ url: call.url, through: call.stack.includes(`${h.origin}${from}`) }).toEqual({
        url: call.url,
        through: true,
      });
    }
    expect(problems).toEqual([]);
    await page.close();
  });
});
