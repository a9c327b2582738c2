/* The console's one way to the service: plain fetch and WebSocket, no build step. Every
 * other console script calls the service through `ConsoleApi` alone, so this module can
 * be switched for the typed client package (@agent-session-service/client) once it is
 * served to browsers. Paths are relative to the service's root, taken from the page's
 * address, so the service may sit under a path prefix. Tokens travel in the
 * Authorization header or, for the WebSocket, its subprotocol: never in a URL. */
/* global location, fetch, URL, WebSocket, setTimeout, clearTimeout, crypto */
'use strict';

// A top-level binding of a classic script: console.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleApi = (() => {
  /** The service's root: the page is `<root>console`. */
  const root = new URL(location.pathname.replace(/console\/?$/, ''), location.origin);
  const at = (path) => new URL(path.replace(/^\//, ''), root);

  /**
   * One JSON call; answers `{status, data}` (data: the parsed body, a problem on errors,
   * null when there is none). A failure to reach the service answers status 0.
   */
  async function call(method, path, token, body, extra = {}) {
    const headers = { accept: 'application/json', ...extra };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      response = await fetch(at(path), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch {
      return { status: 0, data: { message: 'The service cannot be reached.' } };
    }
    const text = await response.text();
    try {
      return { status: response.status, data: text === '' ? null : JSON.parse(text) };
    } catch {
      return { status: response.status, data: null };
    }
  }

  const enc = encodeURIComponent;
  const record = (name, body) => ({ kind: { name, version: 1 }, body });

  /** The close codes after which tailing again is pointless (the tail ended for good). */
  const FINAL = new Set([1000]);

  /**
   * A live tail of a session over the WebSocket (`GET /sessions/{id}/events`), resumed
   * after a dropped connection from the cursor after the last record handed on: records
   * arrive once each, in cursor order, with no gap. `handlers`: `record(landed)`,
   * `state(text)` (connecting, live, reconnecting, ended) and `token()`, answering a fresh
   * session token when the service says the old one expired (close 1008).
   */
  function tail(session, token, from, handlers) {
    let next = from;
    let socket = null;
    let stopped = false;
    let retry = null;
    let delay = 250;
    let current = token;

    function open() {
      if (stopped) return;
      handlers.state(next === from ? 'connecting' : 'reconnecting');
      const url = at(`sessions/${enc(session)}/events?from=${next}`);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      socket = new WebSocket(url, ['bearer', current]);
      socket.addEventListener('open', () => {
        delay = 250;
        handlers.state('live');
      });
      socket.addEventListener('message', (event) => {
        const line = JSON.parse(event.data);
        if ('Err' in line) return;
        const cursor = line.Ok.envelope.cursor;
        // A record already handed on (a resumed tail starts at `next`): never twice.
        if (cursor < next) return;
        next = cursor + 1;
        handlers.record(line.Ok);
      });
      socket.addEventListener('close', (event) => {
        socket = null;
        if (stopped) return;
        if (FINAL.has(event.code)) {
          handlers.state('ended');
          return;
        }
        handlers.state('reconnecting');
        retry = setTimeout(async () => {
          if (event.code === 1008) current = (await handlers.token()) ?? current;
          open();
        }, delay);
        delay = Math.min(delay * 2, 5_000);
      });
    }

    open();
    return {
      /** The cursor the next (re)connection starts from. */
      next: () => next,
      close() {
        stopped = true;
        clearTimeout(retry);
        socket?.close(1000);
      },
    };
  }

  /** The tenant's resources (installs, connections, options, secrets, members, usage). */
  const resources = {
    /** `GET /installs`, one page of composed documents: `{items, next}`. */
    installs: (token, after) =>
      call('GET', `installs?limit=200${after ? `&after=${enc(after)}` : ''}`, token),
    /** `POST /installs/{id}/key`: `{key}`, the new key, answered this once. */
    rotateKey: (token, id) => call('POST', `installs/${enc(id)}/key`, token),
    /** `DELETE /installs/{id}/key`. */
    revokeKey: (token, id) => call('DELETE', `installs/${enc(id)}/key`, token),
    /** `DELETE /installs/{id}`. */
    deleteInstall: (token, id) => call('DELETE', `installs/${enc(id)}`, token),
    /** `GET /connections`. */
    connections: (token) => call('GET', 'connections', token),
    /** `GET /connections/{id}`: the state read live, and the catalog captured at link. */
    connection: (token, name) => call('GET', `connections/${enc(name)}`, token),
    /**
     * `POST /connections/{id}/authorize`: `{authorize}`. The answer binds the URL to this
     * browser with a cookie the callback requires, so this call keeps cookies.
     */
    async authorize(token, name) {
      try {
        const response = await fetch(at(`connections/${enc(name)}/authorize`), {
          method: 'POST',
          headers: { accept: 'application/json', authorization: `Bearer ${token}` },
          cache: 'no-store',
          credentials: 'same-origin',
        });
        const text = await response.text();
        return { status: response.status, data: text === '' ? null : JSON.parse(text) };
      } catch {
        return { status: 0, data: { message: 'The service cannot be reached.' } };
      }
    },
    /** `GET /inferences`. */
    inferences: (token) => call('GET', 'inferences', token),
    /** `DELETE /inferences/{id}`. */
    deleteInference: (token, name) => call('DELETE', `inferences/${enc(name)}`, token),
    /** `GET /secrets`: names and times, never values. */
    secrets: (token) => call('GET', 'secrets', token),
    /** `DELETE /secrets/{id}`. */
    deleteSecret: (token, name) => call('DELETE', `secrets/${enc(name)}`, token),
    /** `GET /console/tenant`: `{tenant, name, members}`. */
    tenant: (token) => call('GET', 'console/tenant', token),
    /** `PUT /console/tenant` with the whole member list. */
    putTenant: (token, name, members) => call('PUT', 'console/tenant', token, { name, members }),
    /** `GET /usage?from&to`: rows by UTC day, both ends inclusive. */
    usage: (token, from, to) => call('GET', `usage?from=${enc(from)}&to=${enc(to)}`, token),
  };

  return {
    /** `GET /console/memberships`: `[{tenant, role}]`. */
    memberships: (token) => call('GET', 'console/memberships', token),
    /** `GET /console/sessions`: one page of the tenant's sessions, newest first. */
    sessions: (token, after) =>
      call('GET', `console/sessions?limit=200${after ? `&after=${enc(after)}` : ''}`, token),
    /** `POST /console/sessions/{id}/token`: a session token writing as `console:<user>`. */
    sessionToken: (token, session) => call('POST', `console/sessions/${enc(session)}/token`, token),
    /** `GET /sessions/{id}/status` with a session token. */
    status: (sessionToken, session) => call('GET', `sessions/${enc(session)}/status`, sessionToken),
    /**
     * A fresh `Idempotency-Key`: one per batch, the same for each resend of it (random
     * bytes: `crypto.randomUUID` is missing outside secure contexts).
     */
    batchKey: () =>
      [...crypto.getRandomValues(new Uint8Array(16))]
        .map((byte) => byte.toString(16).padStart(2, '0'))
        .join(''),
    /** Appends `message.submitted` as batch `key`. */
    send: (sessionToken, session, text, key) =>
      call(
        'POST',
        `sessions/${enc(session)}/events`,
        sessionToken,
        [record('message.submitted', { text })],
        { 'idempotency-key': key },
      ),
    /** Appends `turn.cancel` for `turn` (a cursor, or null for whatever turn runs) as batch `key`. */
    cancel: (sessionToken, session, turn, key) =>
      call(
        'POST',
        `sessions/${enc(session)}/events`,
        sessionToken,
        [record('turn.cancel', { turn })],
        { 'idempotency-key': key },
      ),
    /**
     * `GET /console/sessions/{id}/events`: the plain audit (any member), every public
     * record up to the head as it stood; answers `{status, records}`.
     */
    async audit(token, session) {
      let response;
      try {
        response = await fetch(at(`console/sessions/${enc(session)}/events`), {
          headers: { accept: 'application/jsonstream', authorization: `Bearer ${token}` },
          cache: 'no-store',
          credentials: 'omit',
        });
      } catch {
        return { status: 0, records: [] };
      }
      if (response.status !== 200) return { status: response.status, records: [] };
      const lines = (await response.text()).split('\n').filter((line) => line !== '');
      const records = lines.map((line) => JSON.parse(line)).filter((line) => 'Ok' in line);
      return { status: 200, records: records.map((line) => line.Ok) };
    },
    /** The generated chart of machine `name`, as SVG text (null when it cannot be read). */
    async chart(name) {
      const response = await fetch(at(`console/statecharts/${enc(name)}`), { cache: 'no-store' });
      return response.status === 200 ? response.text() : null;
    },
    tail,
    ...resources,
  };
})();
