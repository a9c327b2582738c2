/* The console's inference options and secrets page: each option's settings (provider,
 * compaction, retries, the secret it names) from `GET /inferences`, and each secret's name
 * and times from `GET /secrets`, which never answers a value (so this page cannot show
 * one). An owner deletes either, asked twice; one still in use is refused, and the
 * service's words show beside the button. Plain browser JavaScript, no build step. */
/* global document, ConsoleApi */
'use strict';

// A top-level binding of a classic script: resources.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleSettings = (() => {
  const $ = (id) => document.getElementById(id);

  function deleteControl(ui, what, name, remove, reload) {
    return ui.control('Delete', {
      confirm: `Delete the ${what} ${name}?`,
      run: remove,
      done: reload,
    });
  }

  function options(ui, who, list, reload) {
    const head = ['Name', 'Provider', 'Compact at', 'Retries', 'Secret', 'Updated'];
    if (ui.owner) head.push('');
    const rows = list.map((option) => {
      const cells = [
        option.name,
        option.provider,
        `${option.compact_at} tokens`,
        `${option.retry.attempts} × from ${option.retry.backoff}`,
        option.credential ?? 'none',
        ui.when(option.updated),
      ];
      if (ui.owner) {
        const remove = () => ConsoleApi.deleteInference(who.token, option.name);
        cells.push(deleteControl(ui, 'inference option', option.name, remove, reload));
      }
      return cells;
    });
    return ui.table('Inference options', head, rows, (i) => ({ inference: list[i].name }));
  }

  function secrets(ui, who, list, reload) {
    const head = ['Name', 'Created', 'Updated'];
    if (ui.owner) head.push('');
    const rows = list.map((secret) => {
      const cells = [secret.name, ui.when(secret.created), ui.when(secret.updated)];
      if (ui.owner) {
        const remove = () => ConsoleApi.deleteSecret(who.token, secret.name);
        cells.push(deleteControl(ui, 'secret', secret.name, remove, reload));
      }
      return cells;
    });
    return ui.table('Secrets', head, rows, (i) => ({ secret: list[i].name }));
  }

  function open(who, ui) {
    let closed = false;
    async function load() {
      const [inferences, held] = await Promise.all([
        ui.read('the inference options', () => ConsoleApi.inferences(who.token)),
        ui.read('the secrets', () => ConsoleApi.secrets(who.token)),
      ]);
      if (closed) return;
      if (inferences !== null)
        $('inference-list').replaceChildren(options(ui, who, inferences, load));
      if (held !== null) $('secret-list').replaceChildren(secrets(ui, who, held, load));
    }
    $('inference-list').replaceChildren();
    $('secret-list').replaceChildren();
    void load();
    return {
      close() {
        closed = true;
      },
    };
  }

  return { open };
})();
