/* The console's installs page: every install of the tenant (`GET /installs`, each page
 * followed) with the document it runs under (the vendor's tools, the tenant's extra tools,
 * inference option and policies), and for owners the key's rotation (the new key shown
 * once, copyable, then gone from the page), its revocation and the install's deletion, each
 * asked twice. Plain browser JavaScript, no build step. */
/* global document, navigator, ConsoleApi */
'use strict';

// A top-level binding of a classic script: resources.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleInstalls = (() => {
  const $ = (id) => document.getElementById(id);
  /** Pages of installs read at most, 200 each. */
  const MAX_PAGES = 10;

  /** One rule of a policy, as words. */
  const rule = (item) =>
    `${item.effect} if ${item.arg} ${item.op.replace('_', ' ')} ${JSON.stringify(item.operand.value)}`;

  function toolsOf(ui, doc) {
    const rows = [
      ...doc.vendor.tools.map((tool) => [tool.name, 'the app', tool.description ?? '']),
      ...doc.tenant.extra_tools.map((extra) => [
        `${extra.connection}__${extra.tool}`,
        `connection ${extra.connection}`,
        '',
      ]),
    ];
    return ui.el(
      'details',
      { class: 'tools' },
      ui.el('summary', {}, `Tools (${rows.length})`),
      ui.el(
        'div',
        { class: 'table-wrap' },
        ui.table('Tools', ['Tool', 'From', 'Description'], rows),
      ),
    );
  }

  function policiesOf(ui, doc) {
    const policies = doc.tenant.policies;
    const rows = policies.map((policy) => [
      policy.tool,
      policy.allow ? 'allowed' : 'disabled',
      policy.posture,
      policy.items.length === 0
        ? 'none'
        : ui.el(
            'ul',
            { class: 'rules' },
            policy.items.map((item) => ui.el('li', {}, rule(item))),
          ),
      policy.project.join(', '),
    ]);
    return ui.el(
      'details',
      { class: 'policies' },
      ui.el('summary', {}, `Policies (${rows.length})`),
      rows.length === 0
        ? ui.el('p', { class: 'note' }, 'No policies: every tool is allowed.')
        : ui.el(
            'div',
            { class: 'table-wrap' },
            ui.table('Policies', ['Tool', 'Enabled', 'Posture', 'Rules', 'Projected'], rows),
          ),
    );
  }

  /** Hides the new key and forgets it. */
  function forgetKey() {
    $('new-key-value').value = '';
    $('new-key-install').textContent = '';
    $('new-key-copied').textContent = '';
    $('new-key').hidden = true;
  }

  function showKey(id, key) {
    $('new-key-install').textContent = id;
    $('new-key-value').value = key;
    $('new-key-copied').textContent = '';
    $('new-key').hidden = false;
    $('new-key-title').focus();
  }

  async function copyKey() {
    const field = $('new-key-value');
    try {
      await navigator.clipboard.writeText(field.value);
      $('new-key-copied').textContent = 'Copied.';
    } catch {
      // No clipboard outside secure contexts: leave it selected for the keyboard's copy.
      field.select();
      $('new-key-copied').textContent = 'Selected: copy it with your keyboard.';
    }
  }

  function controlsOf(ui, who, id, reload) {
    const said = ui.el('p', { class: 'note', role: 'status' });
    return ui.el(
      'div',
      { class: 'controls' },
      ui.control('Rotate key', {
        run: () => ConsoleApi.rotateKey(who.token, id),
        done: (answer) => showKey(id, answer.data.key),
      }),
      ui.control('Revoke key', {
        confirm: `Revoke the key of ${id}? Nothing answers for the install until a key is rotated in.`,
        run: () => ConsoleApi.revokeKey(who.token, id),
        done: () => {
          said.textContent = 'Key revoked: rotate one in to use the install again.';
        },
      }),
      ui.control('Delete install', {
        confirm: `Delete ${id}? Its key stops answering and the install is gone for good.`,
        run: () => ConsoleApi.deleteInstall(who.token, id),
        done: reload,
      }),
      said,
    );
  }

  function card(ui, who, doc, reload) {
    const id = doc.install.id;
    const title = `install-${id}`;
    return ui.el(
      'article',
      { class: 'item', dataset: { install: id }, 'aria-labelledby': title },
      ui.el('h3', { id: title }, doc.vendor.name, ' ', ui.el('code', {}, id)),
      ui.el('p', {}, doc.vendor.description),
      ui.el(
        'p',
        { class: 'meta' },
        `Inference option ${doc.tenant.inference} · consented ${ui.when(doc.install.created)}`,
        ` · updated ${ui.when(doc.install.updated)} · document `,
        ui.el('code', {}, doc.install.vendor.slice(0, 12)),
      ),
      toolsOf(ui, doc),
      policiesOf(ui, doc),
      ui.owner ? controlsOf(ui, who, id, reload) : null,
    );
  }

  function open(who, ui) {
    let closed = false;
    forgetKey();
    $('new-key-copy').onclick = () => void copyKey();
    $('new-key-done').onclick = () => {
      forgetKey();
      $('installs-title').focus();
    };

    async function load() {
      const items = [];
      let after;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const data = await ui.read('the installs', () => ConsoleApi.installs(who.token, after));
        if (data === null || closed) return;
        items.push(...data.items);
        after = data.next;
        if (after === null) break;
      }
      const list = $('install-list');
      list.replaceChildren(...items.map((doc) => card(ui, who, doc, load)));
      if (items.length === 0) list.append(ui.el('p', { class: 'note' }, 'No installs yet.'));
    }

    void load();
    return {
      close() {
        closed = true;
        forgetKey();
      },
    };
  }

  return { open };
})();
