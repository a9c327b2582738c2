/* The console's page script: plain browser JavaScript, no build step. It signs the user in
 * (signin.js, shared with the consent page, as `PageSignIn`), lets them choose a tenant
 * from `GET /console/memberships`, shows the tenant's sessions (`GET /console/sessions`,
 * read again every few seconds, filtered by install and principal) and a session's live
 * view (session.js). Routes live in the fragment (`#/sessions/<id>`); the console token
 * lives in this tab's sessionStorage, the operator token or ID token in memory only. */
/* global window, document, location, history, sessionStorage, setInterval, clearInterval,
   crypto, TextEncoder, URLSearchParams, PageSignIn, ConsoleApi, ConsoleSession,
   ConsoleStatecharts, ConsoleResources */
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const signIn = PageSignIn;
  const TOKEN = 'consoleToken';
  /** How often the directory is read again while it is shown. */
  const DIRECTORY_EVERY_MS = 2_000;
  /** What re-mints a console token for another tenant: the pasted operator token or the ID token. */
  let credential = null;
  let who = null;
  let view = null;
  let directoryTimer = null;

  function status(text) {
    $('status').textContent = text;
    document.body.setAttribute('aria-busy', text === '' ? 'false' : 'true');
  }

  function errorAt(key, message) {
    const place = document.querySelector(`[data-error-for="${key}"]`);
    if (place !== null) place.textContent = message;
  }

  function clearErrors() {
    for (const place of document.querySelectorAll('.error')) place.textContent = '';
  }

  function showOnly(section) {
    for (const name of [
      'signin',
      'directory',
      'session',
      'statecharts',
      ...ConsoleResources.NAMES,
    ]) {
      $(name).hidden = name !== section;
    }
    for (const link of $('nav').querySelectorAll('a')) {
      const here = link.getAttribute('href') === (section === 'directory' ? '#/' : `#/${section}`);
      if (here) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
  }

  function leaveView() {
    view?.close();
    view = null;
    clearInterval(directoryTimer);
    directoryTimer = null;
  }

  function showSignIn(error) {
    leaveView();
    sessionStorage.removeItem(TOKEN);
    who = null;
    $('who').hidden = true;
    $('nav').hidden = true;
    showOnly('signin');
    $('signin-oidc').hidden = signIn.config.oidc === null;
    if (signIn.config.oidc !== null) $('oidc-issuer').textContent = signIn.config.oidc.issuer;
    $('signin-operator').hidden = !signIn.config.operatorGrant;
    $('signin-error').textContent = error ?? '';
    status('');
    $('tenant').focus();
  }

  /** A refused sign-in, beside the field the problem names. */
  function signInFailed(error) {
    if (error.field === 'body.tenant' || error.field === 'body.user') {
      errorAt(error.field, error.message);
    } else if (error.status === 401) {
      errorAt('operator', error.message);
    } else {
      $('signin-error').textContent = `Sign-in failed: ${error.message}`;
    }
  }

  async function signedIn(attempt) {
    clearErrors();
    status('Signing in…');
    try {
      sessionStorage.setItem(TOKEN, await attempt);
    } catch (error) {
      status('');
      signInFailed(error);
      return;
    }
    await enter();
  }

  /** Signed in: who, in which tenant and role; then the view the fragment names. */
  async function enter() {
    const token = sessionStorage.getItem(TOKEN);
    const named = token === null ? null : signIn.who(token);
    if (named === null) return showSignIn();
    status('Loading your tenants…');
    const memberships = await ConsoleApi.memberships(token);
    if (memberships.status === 401)
      return showSignIn('The token no longer verifies; sign in again.');
    const list = memberships.status === 200 ? memberships.data : [];
    const held = list.find((m) => m.tenant === named.tenant);
    who = { user: named.user, tenant: named.tenant, role: held?.role ?? 'none', token };
    const select = $('tenant-select');
    select.replaceChildren();
    for (const m of held === undefined ? [...list, { tenant: named.tenant, role: 'none' }] : list) {
      const option = document.createElement('option');
      option.value = m.tenant;
      option.textContent = `${m.tenant} (${m.role})`;
      option.selected = m.tenant === named.tenant;
      select.append(option);
    }
    $('who-user').textContent = named.user;
    $('who-role').textContent = who.role;
    document.body.dataset.role = who.role;
    $('who').hidden = false;
    $('nav').hidden = false;
    status('');
    route();
  }

  /** Another tenant: a new console token from the credential kept in memory. */
  async function switchTenant(tenant) {
    $('tenant-error').textContent = '';
    if (credential === null) {
      $('tenant').value = tenant;
      showSignIn('Sign in again to open another tenant.');
      return;
    }
    const attempt =
      credential.kind === 'operator'
        ? signIn.operator(tenant, who.user, credential.value)
        : signIn.reexchange(credential.value, tenant);
    try {
      sessionStorage.setItem(TOKEN, await attempt);
    } catch (error) {
      $('tenant-error').textContent = `Cannot open ${tenant}: ${error.message}`;
      $('tenant-select').value = who.tenant;
      return;
    }
    await enter();
  }

  /** SHA-256(install ‖ 0 ‖ principal) as hex: the subject a directory row is filed under. */
  async function subjectOf(install, principal) {
    const bytes = new TextEncoder().encode(`${install}\u0000${principal}`);
    const digest = await crypto.subtle.digest('SHA-256', bytes);
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
  }

  /** The rows the filters keep. */
  async function filtered(rows) {
    const install = $('filter-install').value.trim();
    const principal = $('filter-principal').value.trim();
    errorAt('principal', '');
    let kept = install === '' ? rows : rows.filter((row) => row.install === install);
    if (principal === '') return kept;
    if (crypto.subtle === undefined) {
      errorAt('principal', 'Filtering by principal needs a secure origin (https or localhost).');
      return kept;
    }
    const subjects = new Map();
    for (const row of kept) {
      if (!subjects.has(row.install)) {
        subjects.set(row.install, await subjectOf(row.install, principal));
      }
    }
    kept = kept.filter((row) => row.subject === subjects.get(row.install));
    return kept;
  }

  function sessionRow(row) {
    const tr = document.createElement('tr');
    tr.dataset.session = row.id;
    const link = document.createElement('a');
    link.href = `#/sessions/${row.id}`;
    link.textContent = row.id;
    const cells = [link, row.install, new Date(row.opened).toLocaleString()];
    cells.push(row.archived ? 'archived' : 'live');
    for (const cell of cells) {
      const td = document.createElement('td');
      td.append(cell);
      tr.append(td);
    }
    return tr;
  }

  async function loadDirectory(first) {
    if (first) status('Loading the sessions…');
    const answer = await ConsoleApi.sessions(who.token);
    if (first) status('');
    if (answer.status === 401) return showSignIn('The token no longer verifies; sign in again.');
    if (answer.status !== 200) {
      $('sessions-note').textContent = answer.data?.message ?? `Refused (${answer.status}).`;
      return;
    }
    const rows = await filtered(answer.data.items);
    $('sessions').tBodies[0].replaceChildren(...rows.map(sessionRow));
    const more = answer.data.next === null ? '' : ' (the newest 200)';
    $('sessions-note').textContent =
      rows.length === 0 ? 'No sessions match.' : `${rows.length} sessions${more}.`;
  }

  function showDirectory() {
    showOnly('directory');
    void loadDirectory(true);
    directoryTimer = setInterval(() => void loadDirectory(false), DIRECTORY_EVERY_MS);
  }

  /** A page of the tenant's resources (resources.js). */
  function showResources(page) {
    showOnly(page);
    view = ConsoleResources.open(page, who, () =>
      showSignIn('The token no longer verifies; sign in again.'),
    );
    $(`${page}-title`).focus();
  }

  function route() {
    leaveView();
    if (who === null) return;
    if (location.hash === '#/statecharts') {
      showOnly('statecharts');
      view = ConsoleStatecharts.open();
      return;
    }
    const page = /^#\/([a-z]+)$/.exec(location.hash)?.[1];
    if (ConsoleResources.NAMES.includes(page)) return showResources(page);
    const match = /^#\/sessions\/([A-Za-z0-9_-]{1,100})$/.exec(location.hash);
    if (match === null) return showDirectory();
    showOnly('session');
    view = ConsoleSession.open(match[1], who, () =>
      showSignIn('The token no longer verifies; sign in again.'),
    );
    $('session-title').focus();
  }

  function tenantField() {
    const tenant = $('tenant').value.trim();
    if (tenant === '') errorAt('body.tenant', 'Name the tenant first.');
    return tenant === '' ? null : tenant;
  }

  $('oidc-button').addEventListener('click', () => {
    clearErrors();
    const tenant = tenantField();
    if (tenant === null) return;
    signIn.startOidc(tenant, null).catch((error) => signInFailed(error));
  });
  $('operator-button').addEventListener('click', () => {
    clearErrors();
    const tenant = tenantField();
    const user = $('user').value.trim();
    const operatorToken = $('operator-token').value.trim();
    if (user === '') errorAt('body.user', 'Name the user first.');
    if (operatorToken === '') errorAt('operator', 'Paste the operator token first.');
    if (tenant === null || user === '' || operatorToken === '') return;
    credential = { kind: 'operator', value: operatorToken };
    $('operator-token').value = '';
    void signedIn(signIn.operator(tenant, user, operatorToken));
  });
  $('signout-button').addEventListener('click', () => {
    credential = null;
    showSignIn();
  });
  $('tenant-select').addEventListener('change', (event) => void switchTenant(event.target.value));
  $('filter-install').addEventListener('input', () => void loadDirectory(false));
  $('filter-principal').addEventListener('input', () => void loadDirectory(false));
  window.addEventListener('hashchange', route);
  $('session-title').tabIndex = -1;
  for (const page of ConsoleResources.NAMES) $(`${page}-title`).tabIndex = -1;

  if (new URLSearchParams(location.search).has('code')) {
    // Back from the identity provider (this page is its redirect URI).
    status('Signing in…');
    signIn.finishOidc().then(
      (done) => {
        credential = { kind: 'oidc', value: done.idToken };
        sessionStorage.setItem(TOKEN, done.token);
        void enter();
      },
      (error) => showSignIn(`Sign-in failed: ${error.message}`),
    );
  } else if (sessionStorage.getItem(TOKEN)) {
    void enter();
  } else {
    showSignIn();
  }
  // Nothing sensitive is in the address; the fragment names a view only.
  if (location.search !== '') history.replaceState(null, '', location.pathname + location.hash);
})();
