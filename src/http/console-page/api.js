/* The console's one way to the service: the typed client package
 * (@agent-session-service/client), served from this origin under `console/client/` and
 * loaded by the shared sign-in (`PageSignIn.service()`), as any dashboard would use it.
 * Every other console script calls the service through `ConsoleApi` alone, whose calls
 * answer `{status, data}`: the client's `ServiceProblem` becomes its status and problem
 * body, a failure to reach the service status 0. Tokens travel in the Authorization
 * header or, for the WebSocket, its subprotocol: never in a URL. */
/* global location, URL, WebSocket, AbortController, setTimeout, crypto, PageSignIn */
'use strict';

// A top-level binding of a classic script: console.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleApi = (() => {
  const enc = encodeURIComponent;
  const record = (name, body) => ({ kind: { name, version: 1 }, body });
  const bearer = (token) => ({ authorization: `Bearer ${token}` });
  const UNREACHABLE = { status: 0, data: { message: 'The service cannot be reached.' } };

  /** The client package's module (the one the sign-in loads: same URL, same instance). */
  const clientModule = () => import(new URL(PageSignIn.config.paths.client, location.href).href);

  /**
   * Runs `use(client)` with the service's typed client and answers what it answers; a
   * refusal (`ServiceProblem`) answers `{status, data: problem}`, anything else status 0.
   */
  async function through(use) {
    try {
      return await use(await PageSignIn.service());
    } catch (error) {
      if (error?.name === 'ServiceProblem') return { status: error.status, data: error.body };
      return UNREACHABLE;
    }
  }

  /** An openapi-fetch answer as `{status, data}` (data null when there is no body). */
  const answered = ({ data, response }) => ({ status: response.status, data: data ?? null });

  /**
   * One JSON call through the client's typed API and transport (429 and 503 retried after
   * `Retry-After`); answers `{status, data}` (data: the parsed body, a problem on errors,
   * null when there is none). A failure to reach the service answers status 0.
   */
  function call(method, path, token, body, extra = {}) {
    const headers = { accept: 'application/json', ...extra, ...(token ? bearer(token) : {}) };
    const url = `/${path.replace(/^\//, '')}`;
    return through(async ({ api }) => answered(await api.request(method, url, { body, headers })));
  }

  /**
   * A live tail of a session over the WebSocket (`GET /sessions/{id}/events`) through the
   * client's tail, which resumes after a dropped connection from the cursor after the last
   * record handed on: records arrive once each, in cursor order, with no gap. `handlers`:
   * `record(landed)`, `state(text)` (connecting, live, reconnecting, ended) and `token()`,
   * answering a fresh session token when the service says the old one expired.
   */
  function tail(session, token, from, handlers) {
    const stop = new AbortController();
    let next = Math.max(1, from);
    let current = token;
    let ended = false;
    const report = (text) => {
      if (!ended && !stop.signal.aborted) handlers.state(text);
    };
    // The client's sockets, watched: open is live, a close the tail did not choose is a cut.
    const Native = WebSocket;
    class Watched extends Native {
      constructor(url, protocols) {
        super(url, protocols);
        this.addEventListener('open', () => report('live'));
        this.addEventListener('close', (event) => {
          if (event.code !== 1000) report('reconnecting');
        });
      }
    }

    async function follow() {
      const [{ createClient }, service] = await Promise.all([clientModule(), PageSignIn.service()]);
      const client = createClient({ ...service.options, WebSocket: Watched });
      for (;;) {
        const records = client
          .session({ session, token: current })
          .tail({ from: next, transport: 'websocket', signal: stop.signal });
        let step;
        try {
          while (!(step = await records.next()).done) {
            next = step.value.envelope.cursor + 1;
            handlers.record(step.value);
          }
        } catch (error) {
          // Refused, or reconnects that delivered nothing: wait, then tail again.
          step = { value: error?.status === 401 ? 'token_expired' : 'failed' };
        }
        if (step.value === 'aborted') return;
        if (step.value === 'archived') {
          report('ended');
          ended = true;
          return;
        }
        report('reconnecting');
        if (step.value === 'token_expired') current = (await handlers.token()) ?? current;
        else await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
    }

    handlers.state('connecting');
    // The client could not be loaded: nothing to tail with.
    follow().catch(() => report('failed'));
    return {
      /** The cursor the next (re)connection starts from. */
      next: () => next,
      close: () => stop.abort(),
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
     * browser with a cookie the callback requires, so this call asks for cookies (the
     * sign-in's transport drops them from every other call).
     */
    authorize: (token, name) =>
      through(async ({ api }) =>
        answered(
          await api.POST('/connections/{id}/authorize', {
            params: { path: { id: name } },
            headers: { accept: 'application/json', ...bearer(token) },
            credentials: 'include',
          }),
        ),
      ),
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
  /** A session's typed client with `sessionToken`. */
  const sessionOf = (client, session, sessionToken) =>
    client.session({ session, token: sessionToken });

  /** Lands `records` on `session` as batch `key` (resent with that key if the answer is lost). */
  const append = (sessionToken, session, records, key) =>
    through(async (client) => ({
      status: 200,
      data: await sessionOf(client, session, sessionToken).append(records, {
        idempotencyKey: key,
      }),
    }));

  return {
    /** `GET /console/memberships`: `[{tenant, role}]`. */
    memberships: (token) => call('GET', 'console/memberships', token),
    /** `GET /console/sessions`: one page of the tenant's sessions, newest first. */
    sessions: (token, after) =>
      call('GET', `console/sessions?limit=200${after ? `&after=${enc(after)}` : ''}`, token),
    /** `POST /console/sessions/{id}/token`: a session token writing as `console:<user>`. */
    sessionToken: (token, session) => call('POST', `console/sessions/${enc(session)}/token`, token),
    /** `GET /sessions/{id}/status` with a session token. */
    status: (sessionToken, session) =>
      through(async (client) => ({
        status: 200,
        data: await sessionOf(client, session, sessionToken).status(),
      })),
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
      append(sessionToken, session, [record('message.submitted', { text })], key),
    /** Appends `turn.cancel` for `turn` (a cursor, or null for whatever turn runs) as batch `key`. */
    cancel: (sessionToken, session, turn, key) =>
      append(sessionToken, session, [record('turn.cancel', { turn })], key),
    /**
     * `GET /console/sessions/{id}/events`: the plain audit (any member), every public
     * record up to the head as it stood; answers `{status, records}`.
     */
    async audit(token, session) {
      const { status, data } = await through(async ({ api }) =>
        answered(
          await api.GET('/console/sessions/{id}/events', {
            params: { path: { id: session } },
            headers: { accept: 'application/jsonstream', ...bearer(token) },
            parseAs: 'text',
          }),
        ),
      );
      if (status !== 200) return { status, records: [] };
      const lines = (data ?? '').split('\n').filter((line) => line !== '');
      const records = lines.map((line) => JSON.parse(line)).filter((line) => 'Ok' in line);
      return { status: 200, records: records.map((line) => line.Ok) };
    },
    /** The generated chart of machine `name`, as SVG text (null when it cannot be read). */
    async chart(name) {
      const { status, data } = await through(async ({ api }) =>
        answered(
          await api.GET('/console/statecharts/{machine}', {
            params: { path: { machine: name } },
            parseAs: 'text',
          }),
        ),
      );
      return status === 200 ? data : null;
    },
    tail,
    /**
     * `GET /console/sessions/{id}/events?opened=1`: the opened audit of an ended session
     * (owners only), every record with its sealed layers opened; answers `{status, records,
     * problem}` (problem: the parsed problem when refused, else null).
     */
    async openedAudit(token, session) {
      const { status, data } = await through(async ({ api }) =>
        answered(
          await api.GET('/console/sessions/{id}/events', {
            params: { path: { id: session }, query: { opened: '1' } },
            headers: { accept: 'application/jsonstream', ...bearer(token) },
            parseAs: 'text',
          }),
        ),
      );
      if (status !== 200) return { status, records: [], problem: data };
      const lines = (data ?? '').split('\n').filter((line) => line !== '');
      const records = lines.map((line) => JSON.parse(line)).filter((line) => 'Ok' in line);
      return { status: 200, records: records.map((line) => line.Ok), problem: null };
    },
    /** `GET /console/statecharts`: every machine's state table, as docs/statecharts has it. */
    statecharts: () => call('GET', 'console/statecharts'),
    ...resources,
  };
})();
