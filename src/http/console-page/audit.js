/* The opened audit of an ended session, in the session view (interface 4.3, 5 rule 4): an
 * owner, once the session is archived, may open it, and the log then shows every record
 * the session landed, addressed ones included, call arguments and tool results unsealed
 * (or why a layer cannot be opened). Nobody else is offered it: the service refuses the
 * opened face to members, and a live session's to everyone. Plain browser JavaScript. */
/* global document, ConsoleApi */
'use strict';

// A top-level binding of a classic script: session.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleAudit = (() => {
  const $ = (id) => document.getElementById(id);
  const error = (message) => {
    document.querySelector('#audit [data-error-for="audit"]').textContent = message;
  };

  /** Hides the offer (a live session, a member, or another session shown). */
  function withdraw() {
    $('audit').hidden = true;
    $('audit-button').textContent = 'Open the audit';
    error('');
  }

  /**
   * Offers owner `who` the opened audit of ended session `id`; `shown(records)` puts the
   * opened records on the log, `onExpired` runs when the console token no longer verifies.
   * Listeners go with `signal`.
   */
  function offer(id, who, shown, onExpired, signal) {
    if (who.role !== 'owner') return;
    const button = $('audit-button');
    $('audit').hidden = false;

    async function read() {
      error('');
      button.disabled = true;
      button.setAttribute('aria-busy', 'true');
      const status = $('log-status');
      status.textContent = 'Opening the audit…';
      const answer = await ConsoleApi.openedAudit(who.token, id);
      button.disabled = false;
      button.removeAttribute('aria-busy');
      if (signal.aborted) return;
      if (answer.status === 401) return onExpired();
      if (answer.status !== 200) {
        status.textContent = '';
        error(answer.problem?.message ?? `Refused (${answer.status}).`);
        return;
      }
      $('session').dataset.face = 'opened';
      $('log-title').textContent = 'Log: the opened audit';
      shown(answer.records);
      button.textContent = 'Read the opened audit again';
    }

    button.addEventListener('click', () => void read(), { signal });
  }

  return { offer, withdraw };
})();
