/* The console's connections page: every MCP server the tenant links (`GET /connections`,
 * then each one's `GET /connections/{id}`, which reads an OAuth link's state live), with
 * how the service authenticates to it (never a token) and the catalog captured when it was
 * last linked; an owner re-authorizes one through `POST /connections/{id}/authorize`, whose
 * URL is good in this browser only. Plain browser JavaScript, no build step. */
/* global document, URL, ConsoleApi */
'use strict';

// A top-level binding of a classic script: resources.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleConnections = (() => {
  const $ = (id) => document.getElementById(id);

  function authOf(auth) {
    if (auth.kind === 'bearer') return `the secret ${auth.credential} as a bearer`;
    if (auth.kind === 'oauth') {
      const scopes = auth.scopes?.length ? ` (scopes ${auth.scopes.join(' ')})` : '';
      return `OAuth at ${auth.issuer ?? 'the server'}${scopes}`;
    }
    return 'none';
  }

  function catalogOf(ui, catalog) {
    if (catalog === null) return ui.el('p', { class: 'note' }, 'No catalog yet: never linked.');
    const rows = catalog.tools.map((tool) => [
      ui.el('code', {}, tool.name),
      tool.description ?? '',
    ]);
    return ui.el(
      'div',
      { class: 'catalog' },
      ui.el(
        'p',
        { class: 'meta' },
        `${catalog.tools.length} tools, captured ${ui.when(catalog.captured)} · digest `,
        ui.el('code', {}, catalog.digest.slice(0, 12)),
      ),
      ui.el('div', { class: 'table-wrap' }, ui.table('Catalog', ['Tool', 'Description'], rows)),
    );
  }

  /** The owner's re-authorization: the URL shown as a link, to follow in this browser. */
  function reauthorize(ui, who, name) {
    const link = ui.el('p', { class: 'authorize', hidden: true });
    const control = ui.control('Re-authorize', {
      run: () => ConsoleApi.authorize(who.token, name),
      done: (answer) => {
        const to = new URL(answer.data.authorize);
        link.hidden = false;
        // Only a web address is offered as a link, whatever the server's metadata said.
        if (to.protocol !== 'https:' && to.protocol !== 'http:') {
          link.textContent = 'The authorization server gave an address this page will not open.';
          return;
        }
        const anchor = ui.el('a', { href: to.href }, `Continue at ${to.host} to authorize`);
        link.replaceChildren(anchor);
        anchor.focus();
      },
    });
    return ui.el('div', { class: 'controls' }, control, link);
  }

  function card(ui, who, connection) {
    const title = `connection-${connection.name}`;
    const oauth = connection.auth.kind === 'oauth' || connection.state === 'authorizing';
    return ui.el(
      'article',
      {
        class: 'item',
        dataset: { connection: connection.name, state: connection.state },
        'aria-labelledby': title,
      },
      ui.el(
        'h3',
        { id: title },
        connection.name,
        ' ',
        ui.el('span', { class: `badge state-${connection.state}` }, connection.state),
      ),
      ui.el(
        'dl',
        { class: 'facts' },
        ui.el('dt', {}, 'Endpoint'),
        ui.el('dd', {}, ui.el('code', {}, connection.endpoint)),
        ui.el('dt', {}, 'Authentication'),
        ui.el('dd', {}, authOf(connection.auth)),
        ui.el('dt', {}, 'Tool timeout'),
        ui.el('dd', {}, connection.timeout ?? 'the default'),
        ui.el('dt', {}, 'Result limit'),
        ui.el('dd', {}, connection.result_limit === null ? 'the default' : connection.result_limit),
      ),
      catalogOf(ui, connection.catalog),
      ui.owner && oauth ? reauthorize(ui, who, connection.name) : null,
    );
  }

  function open(who, ui) {
    let closed = false;
    async function load() {
      const list = await ui.read('the connections', () => ConsoleApi.connections(who.token));
      if (list === null || closed) return;
      // Each read again alone: an OAuth link's state is checked live there. One deleted
      // meanwhile (404) is left out; any other refusal is the page's.
      const live = await ui.read('the connections', async () => {
        const answers = await Promise.all(
          list.map((connection) => ConsoleApi.connection(who.token, connection.name)),
        );
        const refused = answers.find((answer) => answer.status !== 200 && answer.status !== 404);
        const found = answers.filter((answer) => answer.status === 200);
        return refused ?? { status: 200, data: found.map((answer) => answer.data) };
      });
      if (live === null || closed) return;
      const place = $('connection-list');
      place.replaceChildren(...live.map((connection) => card(ui, who, connection)));
      if (live.length === 0) place.append(ui.el('p', { class: 'note' }, 'No connections yet.'));
    }
    void load();
    return {
      close() {
        closed = true;
      },
    };
  }

  return { open };
})();
