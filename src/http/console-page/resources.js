/* The console's pages of a tenant's resources (installs, connections, inference options and
 * secrets, members, usage): what they share, and `open(name, who, onExpired)`, which shows
 * one of them. Each page is its own script (installs.js, connections.js, settings.js,
 * members.js, usage.js) answering `{close()}` from its `open`. Owner controls are drawn for
 * owners only; the service refuses them to members anyway, and any refusal is shown beside
 * the control that met it. Plain browser JavaScript, no build step. */
/* global document, ConsoleInstalls, ConsoleConnections, ConsoleSettings, ConsoleMembers,
   ConsoleUsage */
'use strict';

// A top-level binding of a classic script: the page scripts and console.js read it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleResources = (() => {
  /** An element with attributes (`on…` functions become listeners) and children. */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (typeof value === 'function') node.addEventListener(name.slice(2), value);
      else if (name === 'dataset') Object.assign(node.dataset, value);
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child !== undefined && child !== null && child !== false) node.append(child);
    }
    return node;
  }

  /** What a refused answer says, for a person. */
  function problemOf(answer) {
    if (answer.status === 0) return answer.data.message;
    const data = answer.data ?? {};
    const said = data.message ?? data.detail ?? data.title;
    return said === undefined ? `Refused (${answer.status}).` : `${said} (${answer.status})`;
  }

  /** Unix ms as local date and time. */
  const when = (ms) => new Date(ms).toLocaleString();

  /** A table: `head` the column names, `rows` arrays of cells; `rowData` each row's dataset. */
  function table(caption, head, rows, rowData = () => ({})) {
    return el(
      'table',
      {},
      el('caption', { class: 'visually-hidden' }, caption),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          head.map((name) => el('th', { scope: 'col' }, name)),
        ),
      ),
      el(
        'tbody',
        {},
        rows.map((cells, index) =>
          el(
            'tr',
            { dataset: rowData(index) },
            // The column's name on each cell: narrow screens show rows as cards.
            cells.map((cell, n) => el('td', { 'data-label': head[n] || undefined }, cell)),
          ),
        ),
      ),
    );
  }

  /** The section's loading line and busy state; '' ends it. */
  function loading(section, text) {
    section.querySelector('.loading').textContent = text;
    section.setAttribute('aria-busy', text === '' ? 'false' : 'true');
  }

  /** The section's own error line (a refused read); '' clears it. */
  function pageError(section, text) {
    section.querySelector('.page-error').textContent = text;
  }

  /**
   * An owner control: a button that runs `run()` (answering a service answer) and shows a
   * refusal beside itself. With `confirm`, a first press asks (`confirm` is the question)
   * and a second, on the "Yes" button that appears, acts. `done(answer)` runs on success.
   */
  function control(label, { confirm, run, done, ok = [200, 204] }) {
    const error = el('p', { class: 'error', role: 'alert' });
    const ask = el('span', { class: 'confirm', hidden: true });
    const button = el('button', { type: 'button' }, label);
    async function act() {
      error.textContent = '';
      ask.hidden = true;
      button.disabled = true;
      button.setAttribute('aria-busy', 'true');
      const answer = await run();
      button.disabled = false;
      button.removeAttribute('aria-busy');
      if (ok.includes(answer.status)) await done(answer);
      else {
        error.textContent = problemOf(answer);
        button.focus();
      }
    }
    if (confirm === undefined) {
      button.addEventListener('click', () => void act());
    } else {
      const yes = el('button', { type: 'button', class: 'danger', onclick: () => void act() });
      yes.textContent = `Yes, ${label.toLowerCase()}`;
      const keep = el('button', { type: 'button' }, 'Keep it');
      keep.addEventListener('click', () => {
        ask.hidden = true;
        button.focus();
      });
      ask.replaceChildren(el('span', {}, confirm), ' ', yes, keep);
      ask.addEventListener('keydown', (event) => {
        if (event.key === 'Escape') keep.click();
      });
      button.addEventListener('click', () => {
        error.textContent = '';
        ask.hidden = false;
        keep.focus();
      });
    }
    return el('div', { class: 'control' }, button, ask, error);
  }

  const PAGES = () => ({
    installs: ConsoleInstalls,
    connections: ConsoleConnections,
    settings: ConsoleSettings,
    members: ConsoleMembers,
    usage: ConsoleUsage,
  });

  /** The page names `open` knows. */
  const NAMES = ['installs', 'connections', 'settings', 'members', 'usage'];

  /** Shows page `name` for `who` ({user, role, token}); answers `{close()}`. */
  function open(name, who, onExpired) {
    const section = document.getElementById(name);
    const page = PAGES()[name];
    const ui = { el, problemOf, when, table, control, section, owner: who.role === 'owner' };
    ui.busy = (text) => loading(section, text);
    let pending = 0;
    /** A read's answer, or null after showing why there is none; busy while any runs. */
    ui.read = async (what, call) => {
      pending += 1;
      loading(section, `Loading ${what}…`);
      const answer = await call();
      pending -= 1;
      if (pending === 0) loading(section, '');
      if (answer.status === 401) onExpired();
      if (answer.status === 200) return answer.data;
      pageError(section, `Cannot read ${what}: ${problemOf(answer)}`);
      return null;
    };
    pageError(section, '');
    return page.open(who, ui);
  }

  return { NAMES, open };
})();
