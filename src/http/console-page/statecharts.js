/* The statecharts view (`#/statecharts`): every machine's chart and state table as
 * `npm run statecharts` generates them into docs/statecharts, from the machine itself. The
 * chart is the generated SVG (chart.js); the tables are the rows of the machine's
 * Markdown page, served as data (`GET /console/statecharts`), drawn cell for cell as
 * that page writes them. Text from the service is only ever set as textContent. */
/* global document, ConsoleApi, ConsoleChart */
'use strict';

// A top-level binding of a classic script: console.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleStatecharts = (() => {
  const $ = (id) => document.getElementById(id);
  const DASH = '—';

  function el(tag, text) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** Names as code, comma separated; a dash for none. */
  function codes(names) {
    const cell = el('td');
    if (names.length === 0) cell.textContent = DASH;
    names.forEach((name, i) => cell.append(...(i > 0 ? [', '] : []), el('code', name)));
    return cell;
  }

  function table(caption, heads, rows) {
    const node = el('table');
    node.className = 'state-table';
    node.append(el('caption', caption));
    const head = node.createTHead().insertRow();
    for (const text of heads) {
      const th = el('th', text);
      th.scope = 'col';
      head.append(th);
    }
    const body = node.createTBody();
    for (const cells of rows) body.insertRow().append(...cells);
    const wrap = el('div');
    wrap.className = 'table-wrap';
    wrap.append(node);
    return wrap;
  }

  /** The states table: `state` (initial, terminal) and what it means. */
  function states(machine) {
    const rows = machine.states.map((s) => {
      const marks = [s.initial ? 'initial' : null, s.terminal ? 'terminal' : null].filter(Boolean);
      const name = el('td');
      name.append(el('code', s.state), marks.length > 0 ? ` (${marks.join(', ')})` : '');
      return [name, el('td', s.description ?? DASH)];
    });
    return table(`${machine.title}: states`, ['State', 'Description'], rows);
  }

  /** The state × event table, rows numbered in the order the machine tries them. */
  function transitions(machine) {
    const rows = machine.transitions.map((t, i) => [
      el('td', String(i + 1)),
      codes([t.state]),
      codes([t.event]),
      codes(t.guard === null ? [] : [t.guard]),
      codes(t.target === null ? [] : [t.target]),
      codes(t.actions),
      el('td', t.note ?? DASH),
    ]);
    const heads = ['#', 'State', 'Event', 'Guard', 'Target', 'Actions', 'Note'];
    return table(`${machine.title}: transitions`, heads, rows);
  }

  function machineView(machine) {
    const article = el('article');
    article.className = 'machine';
    article.dataset.machine = machine.machine;
    article.setAttribute('aria-labelledby', `machine-${machine.machine}`);
    const title = el('h3', machine.title);
    title.id = `machine-${machine.machine}`;
    const meta = el('p');
    meta.className = 'meta';
    meta.append(el('code', machine.file), machine.source === null ? '' : `: ${machine.source}`);
    const chart = el('div');
    chart.className = 'chart';
    article.append(title, meta, chart, states(machine), transitions(machine));
    if (machine.invariants.length > 0) {
      const list = el('ol');
      list.className = 'invariants';
      list.append(...machine.invariants.map((text) => el('li', text)));
      article.append(el('h4', 'Invariants'), list);
    }
    void ConsoleChart.draw(chart, machine.machine);
    return article;
  }

  /** Shows the view; answers its handle (`close()`), as session.js's does. */
  function open() {
    let closed = false;
    const list = $('statecharts-list');
    list.replaceChildren();
    list.setAttribute('aria-busy', 'true');
    $('statecharts-note').textContent = '';
    ConsoleApi.statecharts().then((answer) => {
      if (closed) return;
      list.removeAttribute('aria-busy');
      if (answer.status !== 200) {
        $('statecharts-note').textContent =
          answer.data?.message ?? `The charts cannot be read (${answer.status}).`;
        return;
      }
      list.append(...answer.data.map(machineView));
    });
    return {
      close() {
        closed = true;
      },
    };
  }

  return { open };
})();
