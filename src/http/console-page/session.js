/* The console's session view: the live log over the WebSocket tail (records rendered by
 * ConsoleRecords, resumed from the last cursor after a dropped connection; a member, who
 * mints no session token, reads the plain audit again every few seconds), the turn chart
 * with the current phase highlighted as records arrive (`GET /sessions/{id}/status` after
 * each burst), and, for an owner, a message box and a cancel, written as `console:<user>`
 * with the session token `POST /console/sessions/{id}/token` mints. Plain browser
 * JavaScript, no build step. */
/* global document, setTimeout, clearTimeout, ConsoleApi, ConsoleRecords, ConsoleChart */
'use strict';

// A top-level binding of a classic script: console.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleSession = (() => {
  const $ = (id) => document.getElementById(id);
  /** Records kept on the page: older ones leave the list, so memory stays bounded. */
  const KEEP = 2_000;
  /** How often a member's view reads the audit again. */
  const AUDIT_EVERY_MS = 2_000;

  /** Shows `message` beside the element named by `data-error-for=key`; '' clears it. */
  function fieldError(key, message) {
    const place = document.querySelector(`#session [data-error-for="${key}"]`);
    if (place !== null) place.textContent = message;
  }

  /**
   * Opens session `id` for the signed-in user (`who`: {user, role, token}); `onExpired`
   * runs when the console token no longer verifies. Answers `{close()}`.
   */
  function open(id, who, onExpired) {
    let closed = false;
    let sessionToken = null;
    let tail = null;
    let chart = null;
    let turn = null;
    let statusTimer = null;
    const owner = who.role === 'owner';

    $('session-id').textContent = id;
    $('log').replaceChildren();
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

    /** The phase from the service (decisions row 35), drawn on the chart. */
    async function refreshStatus() {
      if (closed || sessionToken === null) return;
      const answer = await ConsoleApi.status(sessionToken, id);
      if (closed || answer.status !== 200) return;
      const live = answer.data.live;
      turn = live.turn;
      $('phase').textContent = live.phase;
      chart?.show(live.phase);
    }

    /** One status read per burst of records, not one per record. */
    function statusSoon() {
      clearTimeout(statusTimer);
      statusTimer = setTimeout(() => void refreshStatus(), 30);
    }

    function landed(record) {
      const log = $('log');
      log.append(ConsoleRecords.render(record));
      while (log.childElementCount > KEEP) log.firstElementChild.remove();
      $('tail-next').textContent = String(record.envelope.cursor + 1);
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
      ConsoleChart.draw($('turn-chart'), 'turn').then((drawn) => {
        chart = drawn;
        void refreshStatus();
      });
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

    const onSubmit = (event) => void send(event);
    $('compose').addEventListener('submit', onSubmit);
    $('cancel-button').addEventListener('click', cancel);
    void start();

    return {
      close() {
        closed = true;
        clearTimeout(statusTimer);
        tail?.close();
        $('compose').removeEventListener('submit', onSubmit);
        $('cancel-button').removeEventListener('click', cancel);
      },
    };
  }

  return { open };
})();
