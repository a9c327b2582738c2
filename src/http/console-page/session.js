/* The console's session view: the live log over the WebSocket tail (records rendered by
 * ConsoleRecords into the virtualised ConsoleLog, resumed from the last cursor after a
 * dropped connection; a member, who mints no session token, reads the plain audit again
 * every few seconds), the session and turn charts with the current state highlighted and
 * the transition just taken marked as records arrive (ConsolePhases), the tool calls with
 * their claims (ConsoleClaims), and, for an owner, a message box and a cancel, written as
 * `console:<user>` with the session token `POST /console/sessions/{id}/token` mints, and
 * once the session has ended its opened audit (ConsoleAudit). Plain browser JavaScript,
 * no build step. */
/* global document, setTimeout, clearTimeout, AbortController, ConsoleApi, ConsoleRecords,
   ConsoleChart, ConsoleLog, ConsolePhases, ConsoleClaims, ConsoleAudit */
'use strict';

// A top-level binding of a classic script: console.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleSession = (() => {
  const $ = (id) => document.getElementById(id);
  /** How often a member's view reads the audit again. */
  const AUDIT_EVERY_MS = 2_000;

  /** Shows `message` beside the element named by `data-error-for=key`; '' clears it. */
  function fieldError(key, message) {
    const place = document.querySelector(`#session [data-error-for="${key}"]`);
    if (place !== null) place.textContent = message;
  }

  /** A fresh copy of element `id`, empty and without the listeners of an earlier view. */
  function fresh(id) {
    const copy = $(id).cloneNode(false);
    $(id).replaceWith(copy);
    return copy;
  }

  /** A chart in `id`, forgetting what the last view showed there. */
  function chart(id, machine) {
    const container = $(id);
    delete container.dataset.state;
    delete container.dataset.edge;
    return ConsoleChart.live(container, machine);
  }

  /**
   * Opens session `id` for the signed-in user (`who`: {user, role, token}); `onExpired`
   * runs when the console token no longer verifies. Answers `{close()}`.
   */
  function open(id, who, onExpired) {
    let closed = false;
    let sessionToken = null;
    let tail = null;
    let turn = null;
    let statusTimer = null;
    const owner = who.role === 'owner';
    const listening = new AbortController();
    const signal = listening.signal;

    $('session-id').textContent = id;
    delete $('session').dataset.face;
    $('log-title').textContent = 'Log';
    $('log-status').textContent = 'Loading the log…';
    const log = ConsoleLog.create(fresh('log'), $('log-status'), fresh('log-latest'), (record) =>
      ConsoleRecords.render(record),
    );
    const sessionChart = chart('session-chart', 'session');
    const turnChart = chart('turn-chart', 'turn');
    fresh('calls');
    $('calls-note').hidden = false;
    $('claim').hidden = true;
    const claims = ConsoleClaims.create($('calls'), chart('claim-chart', 'claim'), $('claim-call'));
    let sessionState = 'none';
    let phase = null;
    sessionChart.show(sessionState);
    ConsoleAudit.withdraw();
    $('phase').textContent = '…';
    $('tail-state').textContent = 'connecting';
    $('tail-next').textContent = '…';
    $('compose').hidden = !owner;
    $('owner-note').hidden = owner;
    $('compose-as').textContent = `console:${who.user}`;
    fieldError('message', '');

    async function mint() {
      const answer = await ConsoleApi.sessionToken(who.token, id);
      if (answer.status === 401) onExpired();
      if (answer.status !== 200) {
        $('tail-state').textContent = answer.data?.message ?? `refused (${answer.status})`;
        return null;
      }
      sessionToken = answer.data.token;
      return sessionToken;
    }

    /** The running turn from the service (decisions row 35), for the cancel. */
    async function refreshStatus() {
      if (closed || sessionToken === null) return;
      const answer = await ConsoleApi.status(sessionToken, id);
      if (closed || answer.status !== 200) return;
      turn = answer.data.live.turn;
    }

    /** One status read per burst of records, not one per record. */
    function statusSoon() {
      clearTimeout(statusTimer);
      statusTimer = setTimeout(() => void refreshStatus(), 30);
    }

    /** A landed record: on the log, the calls and both charts. */
    function landed(record) {
      const { envelope, body } = record;
      const kind = envelope.kind.name;
      log.add(record);
      claims.record(record);
      if (kind === 'model.output' && body?.tool_calls?.length > 0) {
        $('calls-note').hidden = true;
        $('claim').hidden = false;
      }
      sessionState = ConsolePhases.session(sessionState, kind);
      sessionChart.show(sessionState);
      phase = ConsolePhases.turn(phase, kind, body, claims.open());
      turnChart.show(phase);
      $('phase').textContent = phase ?? '…';
      $('tail-next').textContent = String(envelope.cursor + 1);
      if (kind === 'session.archived') {
        ConsoleAudit.offer(id, who, (records) => log.replace(records), onExpired, signal);
      }
      if (owner) statusSoon();
    }

    /**
     * A member mints no session token: the log comes from the plain audit instead, read
     * again every few seconds (records already shown are skipped) until the session ends.
     */
    let next = 0;
    async function follow() {
      while (!closed) {
        const answer = await ConsoleApi.audit(who.token, id);
        if (closed) return;
        if (answer.status === 401) return onExpired();
        $('tail-state').textContent =
          answer.status === 200 ? 'audit' : `refused (${answer.status})`;
        for (const record of answer.records) {
          if (record.envelope.cursor < next) continue;
          next = record.envelope.cursor + 1;
          landed(record);
          if (record.envelope.kind.name === 'session.archived') return;
        }
        await new Promise((resolve) => {
          statusTimer = setTimeout(resolve, AUDIT_EVERY_MS);
        });
      }
    }

    async function start() {
      if (!owner) return void follow();
      if ((await mint()) === null || closed) return;
      void refreshStatus();
      tail = ConsoleApi.tail(id, sessionToken, 0, {
        record: landed,
        state: (text) => {
          $('tail-state').textContent = text;
          $('session').dataset.tail = text;
        },
        token: mint,
      });
    }

    /**
     * Sends one batch through `attempt(key)`, showing a refusal beside the message box. The
     * batch keeps its `Idempotency-Key` when it is sent again with a fresh token.
     */
    async function write(button, attempt) {
      fieldError('message', '');
      button.disabled = true;
      button.setAttribute('aria-busy', 'true');
      const key = ConsoleApi.batchKey();
      let answer = await attempt(key);
      if (answer.status === 401 && (await mint()) !== null) answer = await attempt(key);
      button.disabled = false;
      button.removeAttribute('aria-busy');
      if (answer.status === 200) return true;
      const problem = answer.data ?? {};
      const where = problem.field ? ` (${problem.field})` : '';
      fieldError('message', `${problem.message ?? `Refused (${answer.status}).`}${where}`);
      return false;
    }

    async function send(event) {
      event.preventDefault();
      const text = $('message').value;
      if (text.trim() === '') {
        fieldError('message', 'Write a message first.');
        $('message').focus();
        return;
      }
      const sent = await write($('send-button'), (key) =>
        ConsoleApi.send(sessionToken, id, text, key),
      );
      if (sent) $('message').value = '';
    }

    const cancel = () =>
      void write($('cancel-button'), (key) => ConsoleApi.cancel(sessionToken, id, turn, key));

    $('compose').addEventListener('submit', (event) => void send(event), { signal });
    $('cancel-button').addEventListener('click', cancel, { signal });
    void start();

    return {
      close() {
        closed = true;
        clearTimeout(statusTimer);
        tail?.close();
        listening.abort();
      },
    };
  }

  return { open };
})();
