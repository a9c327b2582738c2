/* The consent page's script: plain browser JavaScript,
 * no build step. It signs the owner in (signin.js, loaded before it as `PageSignIn`),
 * shows who is consenting for which tenant, reads the proposal and the tenant's options and
 * connections, and consents through the form of form.js (loaded first, as `ConsentForm`)
 * or declines. Every call goes through the service's typed client (`PageSignIn.service`),
 * whose refusals arrive as its `ServiceProblem`. */
/* global document, location, history, sessionStorage, URL, URLSearchParams, ConsentForm, PageSignIn */
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  // Every call below carries the owner's token to a path built from this
  // page's address, so the id there must be a request id before anything is fetched: a
  // crafted link (`/consent/..%2Finstalls%2F…%2Fkey`) must not steer those calls elsewhere.
  const REQUEST_ID = /^rq_[0-9a-f]{32}$/;
  const named = location.pathname.split('/').pop() ?? '';
  const request = REQUEST_ID.test(named) ? named : null;
  const form = ConsentForm;
  const signIn = PageSignIn;
  /** Where each field path of the last submission is shown: path → element. */
  let fieldPlaces = new Map();
  let token = null;

  function status(text) {
    $('status').textContent = text;
  }

  /** The typed client with the owner's console token. */
  async function owner() {
    return (await signIn.service()).with({ consoleToken: token });
  }

  /** A typed `GET` of a console list (`/inferences`): its items, or none when refused. */
  async function list(path) {
    const { api } = await owner();
    return api.GET(path, { headers: { authorization: `Bearer ${token}` } }).then(
      ({ data }) => data,
      () => [],
    );
  }

  /** What the page makes of a refused consent or decline (a `ServiceProblem`, or a network error). */
  function refused(error, places) {
    if (error?.code === 'already_granted') {
      finish('Consented', `This request was granted already: install ${error.body.install}.`);
    } else if (error?.status === 401) {
      showSignIn('The token no longer verifies; sign in again.');
    } else {
      form.showErrors(error?.body ?? { message: `Not sent: ${error?.message}` }, places);
    }
  }

  function showSignIn(error) {
    token = null;
    sessionStorage.removeItem('consoleToken');
    $('who').hidden = true;
    $('proposal').hidden = true;
    $('consent').hidden = true;
    $('signin').hidden = false;
    $('signin-oidc').hidden = signIn.config.oidc === null;
    if (signIn.config.oidc !== null) $('oidc-issuer').textContent = signIn.config.oidc.issuer;
    $('signin-operator').hidden = !signIn.config.operatorGrant;
    $('signin-error').textContent = error ?? '';
    status('');
  }

  /** Signing in answers a console token, or says why not beside the form. */
  async function signedIn(attempt) {
    $('signin-error').textContent = '';
    try {
      token = await attempt;
    } catch (error) {
      $('signin-error').textContent = `Sign-in failed: ${error.message}`;
      return;
    }
    sessionStorage.setItem('consoleToken', token);
    await load();
  }

  function tenantField() {
    const tenant = $('tenant').value.trim();
    if (tenant === '') $('signin-error').textContent = 'Name the tenant first.';
    return tenant === '' ? null : tenant;
  }

  function finish(title, text) {
    $('consent').hidden = true;
    $('done').hidden = false;
    $('done-title').textContent = title;
    $('done-text').textContent = text;
    status('');
  }

  /** Who is consenting: the token's user and tenant, and the role the tenant gives them. */
  async function showWho() {
    const named = signIn.who(token);
    if (named === null) return;
    const memberships = await list('/console/memberships');
    const held = Array.isArray(memberships)
      ? memberships.find((m) => m.tenant === named.tenant)
      : undefined;
    $('who-user').textContent = named.user;
    $('who-tenant').textContent = named.tenant;
    $('who-role').textContent =
      held === undefined ? 'not a member: only an owner can consent' : held.role;
    $('who').hidden = false;
  }

  async function decline() {
    form.clearErrors();
    $('decline-button').disabled = true;
    try {
      await (await owner()).decline(request);
      finish(
        'Declined',
        'You declined this request: nothing was installed, and the app is told when it next polls.',
      );
    } catch (error) {
      refused(error, new Map());
    } finally {
      $('decline-button').disabled = false;
    }
  }

  async function submit(event) {
    event.preventDefault();
    form.clearErrors();
    const { body, places } = form.collect();
    fieldPlaces = places;
    $('consent-button').disabled = true;
    try {
      const answer = await (await owner()).consent(request, body);
      finish(
        'Consented',
        `Install ${answer.install} runs under this consent. The app receives its key when it next polls; you can close this page.`,
      );
    } catch (error) {
      refused(error, fieldPlaces);
    } finally {
      $('consent-button').disabled = false;
    }
  }

  async function load() {
    $('signin').hidden = true;
    status('Loading the proposal…');
    let proposal;
    try {
      proposal = await (await owner()).readProposal(request);
    } catch (error) {
      if (error?.status === 401) return showSignIn('That token does not verify.');
      await showWho();
      return status(`The proposal cannot be read: ${error?.message}`);
    }
    await showWho();
    $('proposal').hidden = false;
    $('vendor-name').textContent = proposal.vendor.name;
    $('vendor-description').textContent = proposal.vendor.description;
    $('request-id').textContent = proposal.request;
    $('vendor-hash').textContent = proposal.hash;
    $('expires').textContent = new Date(proposal.expires).toLocaleString();
    form.renderTools(proposal.vendor.tools);
    if (proposal.state === 'granted')
      return finish('Consented', `This request was granted already: install ${proposal.install}.`);
    if (proposal.state === 'declined')
      return finish('Declined', 'This request was declined already: nothing was installed.');
    if (proposal.install !== null) {
      $('update-note').hidden = false;
      $('update-install').textContent = proposal.install;
    }
    const [inferences, connections] = await Promise.all([
      list('/inferences'),
      list('/connections'),
    ]);
    form.renderInference(inferences);
    $('policies').replaceChildren();
    for (const tool of proposal.vendor.tools)
      form.policyEditor(tool.name, tool.input_schema, false);
    form.renderExtraTools(connections);
    $('consent').hidden = false;
    status('');
  }

  if (location.pathname.endsWith('/consent/signed-in')) {
    // Back from the identity provider: finish the sign-in, then return to the request.
    status('Signing in…');
    signIn.finishOidc().then(
      (done) => {
        sessionStorage.setItem('consoleToken', done.token);
        const back = REQUEST_ID.test(done.request) ? done.request : '';
        location.replace(new URL(back, location.href).href);
      },
      (error) => status(`Sign-in failed: ${error.message}. Open the consent link again.`),
    );
    return;
  }

  if (request === null) {
    // No fetch at all, no sign-in form: nothing here may use a token (and one handed over
    // in the fragment leaves the address unused).
    if (location.hash !== '') history.replaceState(null, '', location.pathname + location.search);
    $('signin').hidden = true;
    status('This address names no consent request. Open the consent link the app gave you.');
    return;
  }

  $('oidc-button').addEventListener('click', () => {
    const tenant = tenantField();
    if (tenant === null) return;
    // The browser leaves for the provider; only a failure to get there comes back here.
    signIn.startOidc(tenant, request).catch((error) => {
      $('signin-error').textContent = `Sign-in failed: ${error.message}`;
    });
  });
  $('operator-button').addEventListener('click', () => {
    const tenant = tenantField();
    const user = $('user').value.trim();
    const operatorToken = $('operator-token').value.trim();
    if (tenant === null) return;
    if (user === '' || operatorToken === '') {
      $('signin-error').textContent = 'Name the user and paste the operator token first.';
      return;
    }
    void signedIn(signIn.operator(tenant, user, operatorToken));
  });
  $('signout-button').addEventListener('click', () => showSignIn());
  $('decline-button').addEventListener('click', () => void decline());
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
