/* The consent page's form: what the vendor asks for, and the tenant
 * config an owner composes (inference option, extra tools, per-tool policies), read back as
 * the body of `POST /consent/{request}`; a refusal is shown beside the field its problem
 * names. Untrusted text (the vendor's, the servers') is only ever set as textContent. */
/* global document, CSS */
'use strict';

// A top-level binding of a classic script: the page script (consent.js) reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsentForm = (() => {
  const $ = (id) => document.getElementById(id);
  const OPS = ['is', 'is_not', 'in', 'not_in', 'lt', 'gt'];

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  function renderTools(tools) {
    const box = $('tools');
    box.replaceChildren();
    for (const tool of tools) {
      const details = el('details', {}, el('summary', { text: 'Input and output schemas' }));
      details.append(
        el('p', { text: 'Input' }),
        el('pre', { text: JSON.stringify(tool.input_schema, null, 2) }),
        el('p', { text: 'Output' }),
        el('pre', { text: JSON.stringify(tool.output_schema, null, 2) }),
      );
      box.append(
        el(
          'div',
          { class: 'tool' },
          el('h4', {}, el('code', { text: tool.name })),
          el('p', { text: tool.description }),
          details,
        ),
      );
    }
  }

  function renderInference(options) {
    const field = $('inference-field');
    field.replaceChildren(el('label', { for: 'inference', text: 'Inference option' }));
    if (Array.isArray(options) && options.length > 0) {
      const select = el('select', { id: 'inference' });
      for (const option of options)
        select.append(el('option', { value: option.name, text: option.name }));
      field.append(select);
    } else {
      field.append(el('input', { id: 'inference', placeholder: 'name of an inference option' }));
    }
    field.append(el('p', { class: 'error', role: 'alert' }));
  }

  function renderExtraTools(connections) {
    const box = $('extra-tools');
    box.replaceChildren();
    const usable = Array.isArray(connections) ? connections.filter((c) => c.catalog !== null) : [];
    if (usable.length === 0) box.append(el('p', { class: 'note', text: 'No linked connections.' }));
    for (const connection of usable) {
      for (const tool of connection.catalog.tools) {
        const name = `${connection.name}__${tool.name}`;
        const pick = el('input', {
          type: 'checkbox',
          'data-connection': connection.name,
          'data-tool': tool.name,
        });
        pick.addEventListener('change', () => {
          const editor = document.querySelector(`fieldset[data-tool="${CSS.escape(name)}"]`);
          if (editor !== null) editor.hidden = !pick.checked;
        });
        const row = el('div', { class: 'field extra' }, el('label', {}, pick, ` ${name}`));
        if (tool.description)
          row.append(el('span', { class: 'note', text: ` — ${tool.description}` }));
        row.append(el('p', { class: 'error', role: 'alert' }));
        box.append(row);
        policyEditor(name, tool.inputSchema, true);
      }
    }
  }

  function itemRow(tool, list) {
    const index = list.children.length + 1;
    const label = (what) => `${tool} rule ${index} ${what}`;
    const effect = el('select', { 'data-part': 'effect', 'aria-label': label('effect') });
    for (const e of ['deny', 'allow']) effect.append(el('option', { value: e, text: e }));
    const arg = el('input', {
      'data-part': 'arg',
      'aria-label': label('argument'),
      list: `args-${tool}`,
    });
    const op = el('select', { 'data-part': 'op', 'aria-label': label('op') });
    for (const o of OPS) op.append(el('option', { value: o, text: o }));
    const value = el('input', { 'data-part': 'value', 'aria-label': label('value') });
    const remove = el('button', { type: 'button', text: 'Remove' });
    const row = el('div', { class: 'item' }, effect, arg, op, value, remove);
    row.append(el('p', { class: 'error', role: 'alert' }));
    remove.addEventListener('click', () => row.remove());
    list.append(row);
  }

  function policyEditor(tool, schema, hidden) {
    const properties = Object.keys((schema && schema.properties) || {});
    const datalist = el('datalist', { id: `args-${tool}` });
    for (const p of properties) datalist.append(el('option', { value: p }));
    const allow = el('input', {
      type: 'checkbox',
      'data-part': 'allow',
      'aria-label': `${tool} enabled`,
    });
    allow.checked = true;
    const posture = el('select', { 'data-part': 'posture', 'aria-label': `${tool} posture` });
    for (const p of ['permissive', 'restrictive'])
      posture.append(el('option', { value: p, text: p }));
    const items = el('div', { 'data-part': 'items' });
    const add = el('button', { type: 'button', text: 'Add rule' });
    add.addEventListener('click', () => itemRow(tool, items));
    const project = el('input', {
      'data-part': 'project',
      'aria-label': `${tool} evidence args`,
      placeholder: 'args, comma separated',
    });
    const fieldset = el(
      'fieldset',
      { 'data-tool': tool },
      el('legend', {}, el('code', { text: tool })),
      datalist,
      el('div', { class: 'field' }, el('label', {}, allow, ' Enabled')),
      el('div', { class: 'field' }, el('label', { text: 'Posture ' }), posture),
      items,
      add,
      el(
        'div',
        { class: 'field', 'data-part': 'project-field' },
        el('label', { text: 'Evidence args ' }),
        project,
        el('p', { class: 'error', role: 'alert' }),
      ),
      el('p', { class: 'error', role: 'alert' }),
    );
    fieldset.hidden = hidden;
    $('policies').append(fieldset);
  }

  function operandOf(op, text) {
    const raw = text.trim();
    try {
      return JSON.parse(raw);
    } catch {
      if (op === 'in' || op === 'not_in')
        return raw === '' ? [] : raw.split(',').map((v) => v.trim());
      if (op === 'lt' || op === 'gt') return Number(raw);
      return raw;
    }
  }

  /** The tenant config the form says, and where each of its fields is shown. */

  function collect() {
    const places = new Map();
    const inference = $('inference');
    places.set('body.inference', $('inference-field'));
    const extra_tools = [];
    for (const box of document.querySelectorAll('#extra-tools input[type=checkbox]')) {
      if (!box.checked) continue;
      places.set(`body.extra_tools.${extra_tools.length}`, box.closest('.field'));
      extra_tools.push({ connection: box.dataset.connection, tool: box.dataset.tool });
    }
    const policies = [];
    for (const fieldset of document.querySelectorAll('#policies fieldset')) {
      if (fieldset.hidden) continue;
      const part = (name) => fieldset.querySelector(`[data-part="${name}"]`);
      const rows = [...part('items').children];
      const project = part('project')
        .value.split(',')
        .map((a) => a.trim())
        .filter((a) => a !== '');
      const allow = part('allow').checked;
      const posture = part('posture').value;
      if (allow && posture === 'permissive' && rows.length === 0 && project.length === 0) continue;
      const at = `body.policies.${policies.length}`;
      places.set(at, fieldset);
      places.set(`${at}.project`, part('project-field'));
      const items = rows.map((row, index) => {
        places.set(`${at}.items.${index}`, row);
        const value = (name) => row.querySelector(`[data-part="${name}"]`).value;
        return {
          effect: value('effect'),
          arg: value('arg').trim(),
          op: value('op'),
          operand: { value: operandOf(value('op'), value('value')) },
        };
      });
      policies.push({ tool: fieldset.dataset.tool, allow, posture, items, project });
    }
    return { body: { inference: inference.value.trim(), extra_tools, policies }, places };
  }

  function clearErrors() {
    for (const node of document.querySelectorAll('#consent .error')) node.textContent = '';
    for (const node of document.querySelectorAll('[aria-invalid]'))
      node.removeAttribute('aria-invalid');
  }

  /** Shows each failed field beside the closest element the form placed it at. */

  function showErrors(problem, fieldPlaces) {
    const faults =
      problem.errors ??
      (problem.field ? [{ field: problem.field, reason: problem.reason ?? problem.message }] : []);
    const unplaced = [];
    for (const fault of faults) {
      const path = fault.field.split('.');
      let place;
      while (path.length > 0 && place === undefined) {
        place = fieldPlaces.get(path.join('.'));
        path.pop();
      }
      if (place === undefined) {
        unplaced.push(`${fault.field} ${fault.reason}`);
        continue;
      }
      const slot = [...place.children].reverse().find((c) => c.classList.contains('error'));
      if (slot === undefined) {
        unplaced.push(`${fault.field} ${fault.reason}`);
        continue;
      }
      const line = el('span', { 'data-error-for': fault.field, text: fault.reason });
      if (slot.textContent !== '') slot.append(el('br'));
      slot.append(line);
      place.setAttribute('aria-invalid', 'true');
    }
    $('form-error').textContent =
      unplaced.length > 0
        ? unplaced.join('; ')
        : faults.length === 0
          ? (problem.message ?? 'Refused.')
          : '';
  }

  return {
    el,
    renderTools,
    renderInference,
    renderExtraTools,
    policyEditor,
    collect,
    clearErrors,
    showErrors,
  };
})();
