/* The consent page's script (issue 5 item 4): plain browser JavaScript, no build step.
 * It signs in with a console token, reads the proposal and the tenant's options and
 * connections through the JSON API, and consents through the form of form.js (loaded
 * first, as `ConsentForm`). */
/* global document, location, history, sessionStorage, fetch, URL, URLSearchParams, ConsentForm */
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  // Issue 14 item 5: every call below carries the owner's token to a path built from this
  // page's address, so the id there must be a request id before anything is fetched: a
  // crafted link (`/consent/..%2Finstalls%2F…%2Fkey`) must not steer those calls elsewhere.
  const REQUEST_ID = /^rq_[0-9a-f]{32}$/;
  const named = location.pathname.split('/').pop() ?? '';
  const request = REQUEST_ID.test(named) ? named : null;
  const form = ConsentForm;
  /** Where each field path of the last submission is shown: path → element. */
  let fieldPlaces = new Map();
  let token = null;

  function status(text) {
    $('status').textContent = text;
  }

  async function call(method, path, body) {
    const headers = { accept: 'application/json', authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(new URL(path, location.href), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
    const text = await response.text();
    try {
      return { status: response.status, data: text === '' ? null : JSON.parse(text) };
    } catch {
      return { status: response.status, data: null };
    }
  }

  function showSignIn(error) {
    token = null;
    sessionStorage.removeItem('consoleToken');
    $('signin').hidden = false;
    $('signin-error').textContent = error ?? '';
    status('');
  }

  function finish(text) {
    $('consent').hidden = true;
    $('done').hidden = false;
    $('done-text').textContent = text;
    status('');
  }

  async function submit(event) {
    event.preventDefault();
    form.clearErrors();
    const { body, places } = form.collect();
    fieldPlaces = places;
    $('consent-button').disabled = true;
    const answer = await call('POST', request, body).finally(() => {
      $('consent-button').disabled = false;
    });
    if (answer.status === 200) {
      finish(
        `Install ${answer.data.install} runs under this consent. The app receives its key when it next polls; you can close this page.`,
      );
    } else if (answer.status === 409 && answer.data?.code === 'already_granted') {
      finish(`This request was granted already: install ${answer.data.install}.`);
    } else if (answer.status === 401) {
      showSignIn('The token no longer verifies; sign in again.');
    } else {
      form.showErrors(answer.data ?? { message: `Refused (${answer.status}).` }, fieldPlaces);
    }
  }

  async function load() {
    $('signin').hidden = true;
    status('Loading the proposal…');
    const read = await call('GET', request);
    if (read.status === 401) return showSignIn('That token does not verify.');
    if (read.status !== 200)
      return status(read.data?.message ?? `The proposal cannot be read (${read.status}).`);
    const proposal = read.data;
    $('proposal').hidden = false;
    $('vendor-name').textContent = proposal.vendor.name;
    $('vendor-description').textContent = proposal.vendor.description;
    $('request-id').textContent = proposal.request;
    $('vendor-hash').textContent = proposal.hash;
    $('expires').textContent = new Date(proposal.expires).toLocaleString();
    form.renderTools(proposal.vendor.tools);
    if (proposal.state === 'granted')
      return finish(`This request was granted already: install ${proposal.install}.`);
    if (proposal.install !== null) {
      $('update-note').hidden = false;
      $('update-install').textContent = proposal.install;
    }
    const [inferences, connections] = await Promise.all([
      call('GET', '../inferences'),
      call('GET', '../connections'),
    ]);
    form.renderInference(inferences.status === 200 ? inferences.data : []);
    $('policies').replaceChildren();
    for (const tool of proposal.vendor.tools)
      form.policyEditor(tool.name, tool.input_schema, false);
    form.renderExtraTools(connections.status === 200 ? connections.data : []);
    $('consent').hidden = false;
    status('');
  }

  if (request === null) {
    // No fetch at all, no sign-in form: nothing here may use a token (and one handed over
    // in the fragment leaves the address unused).
    if (location.hash !== '') history.replaceState(null, '', location.pathname + location.search);
    $('signin').hidden = true;
    status('This address names no consent request. Open the consent link the app gave you.');
    return;
  }

  $('signin-button').addEventListener('click', () => {
    token = $('token').value.trim();
    if (token === '') return showSignIn('Paste a console token first.');
    sessionStorage.setItem('consoleToken', token);
    void load();
  });
  $('consent').addEventListener('submit', (event) => void submit(event));

  // A token in the fragment never reaches a server; take it and drop it from the address.
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromFragment) {
    history.replaceState(null, '', location.pathname + location.search);
    sessionStorage.setItem('consoleToken', fromFragment);
  }
  token = sessionStorage.getItem('consoleToken');
  if (token) void load();
  else showSignIn();
})();
