/* The console's usage page: the tenant's daily tokens per model and tool calls per tool
 * over a chosen range of UTC days (`GET /usage`, owners only), drawn as stacked bars in an
 * SVG this script writes itself, and the same figures as tables. A refused range shows
 * beside the date it names. Plain browser JavaScript, no build step. */
/* global document, ConsoleApi */
'use strict';

// A top-level binding of a classic script: resources.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleUsage = (() => {
  const $ = (id) => document.getElementById(id);
  const SVG = 'http://www.w3.org/2000/svg';
  const DAY_MS = 86_400_000;
  /** The range first shown: the last 30 days, today included. */
  const FIRST_DAYS = 30;
  /** Series colours, told apart by the legend and the tables too. */
  const COLOURS = ['#1e88e5', '#e65100', '#43a047', '#8e24aa', '#00897b', '#c62828', '#6d4c41'];
  /** The plot's margins; its width follows the page's, so its words stay readable. */
  const BOX = { height: 240, left: 56, right: 12, top: 12, bottom: 30 };
  /** The widest a bar is drawn, in px. */
  const BAR_MAX = 48;

  const dayOf = (ms) => new Date(ms).toISOString().slice(0, 10);

  function svg(tag, attrs = {}, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    node.append(...children);
    return node;
  }

  /** Every UTC day from `from` to `to`, both included (at most 366). */
  function daysOf(from, to) {
    const days = [];
    for (let at = Date.parse(`${from}T00:00:00Z`); days.length < 366; at += DAY_MS) {
      const day = dayOf(at);
      if (day > to) break;
      days.push(day);
    }
    return days;
  }

  /**
   * A stacked bar chart into `place`: one bar per day, one segment per series; `values`
   * maps day → series → figure. Each segment is a `rect` naming its day, series and figure.
   */
  function draw(place, title, unit, days, values) {
    const series = [...new Set(days.flatMap((day) => Object.keys(values.get(day) ?? {})))].sort();
    if (series.length === 0) {
      place.replaceChildren(document.createTextNode(`No ${unit} in this range.`));
      return;
    }
    const totals = days.map((day) =>
      Object.values(values.get(day) ?? {}).reduce((a, b) => a + b, 0),
    );
    const top = Math.max(1, ...totals);
    const width = Math.min(960, Math.max(300, place.clientWidth || 720));
    const plotW = width - BOX.left - BOX.right;
    const plotH = BOX.height - BOX.top - BOX.bottom;
    const slot = plotW / days.length;
    const bar = Math.max(1, Math.min(BAR_MAX, slot * 0.7));
    const y = (value) => BOX.top + plotH - (value / top) * plotH;
    const chart = svg('svg', {
      viewBox: `0 0 ${width} ${BOX.height}`,
      role: 'img',
      'aria-label': `${title}; the figures are in the table below`,
    });
    chart.append(svg('title', {}, title));
    for (const tick of new Set([0, Math.round(top / 2), top])) {
      const at = y(tick);
      chart.append(
        svg('line', { x1: BOX.left, x2: width - BOX.right, y1: at, y2: at, class: 'grid' }),
        svg('text', { x: BOX.left - 6, y: at + 4, 'text-anchor': 'end' }, String(tick)),
      );
    }
    // Day labels no closer than 70 px.
    const every = Math.ceil(days.length / Math.max(1, Math.floor(plotW / 70)));
    days.forEach((day, index) => {
      const x = BOX.left + index * slot;
      let base = 0;
      for (const [n, name] of series.entries()) {
        const value = values.get(day)?.[name] ?? 0;
        if (value === 0) continue;
        const rect = svg('rect', {
          x: x + (slot - bar) / 2,
          width: bar,
          y: y(base + value),
          height: Math.max(1, y(base) - y(base + value)),
          fill: COLOURS[n % COLOURS.length],
          'data-day': day,
          'data-series': name,
          'data-value': value,
        });
        rect.append(svg('title', {}, `${day} · ${name}: ${value} ${unit}`));
        chart.append(rect);
        base += value;
      }
      if (index % every === 0) {
        const label = svg('text', { x: x + slot / 2, y: BOX.height - 10, 'text-anchor': 'middle' });
        label.textContent = day.slice(5);
        chart.append(label);
      }
    });
    const legend = document.createElement('ul');
    legend.className = 'legend';
    for (const [n, name] of series.entries()) {
      const swatch = svg('svg', {
        viewBox: '0 0 10 10',
        width: 12,
        height: 12,
        'aria-hidden': 'true',
      });
      swatch.append(svg('rect', { width: 10, height: 10, fill: COLOURS[n % COLOURS.length] }));
      const item = document.createElement('li');
      item.append(swatch, ` ${name}`);
      legend.append(item);
    }
    place.replaceChildren(chart, legend);
  }

  /** The figures as tables: tokens by day and model, calls by day and tool. */
  function tables(ui, rows) {
    const tokenRows = [];
    const tokenData = [];
    const callRows = [];
    const callData = [];
    for (const row of rows) {
      for (const [model, t] of Object.entries(row.tokens)) {
        tokenRows.push([row.day, model, t.input, t.output, t.input + t.output]);
        tokenData.push({ day: row.day, model, tokens: t.input + t.output });
      }
      for (const [tool, calls] of Object.entries(row.tool_calls)) {
        callRows.push([row.day, tool, calls]);
        callData.push({ day: row.day, tool });
      }
    }
    return [
      ui.el('h4', {}, 'Tokens'),
      ui.table(
        'Tokens by day and model',
        ['Day', 'Model', 'Input', 'Output', 'Total'],
        tokenRows,
        (i) => tokenData[i],
      ),
      ui.el('h4', {}, 'Tool calls'),
      ui.table(
        'Tool calls by day and tool',
        ['Day', 'Tool', 'Calls'],
        callRows,
        (i) => callData[i],
      ),
    ];
  }

  function open(who, ui) {
    let closed = false;
    const errorAt = (field, text) => {
      ui.section.querySelector(`[data-error-for="${field}"]`).textContent = text;
    };

    async function show() {
      errorAt('query.from', '');
      errorAt('query.to', '');
      const from = $('usage-from').value;
      const to = $('usage-to').value;
      if (from === '') errorAt('query.from', 'Choose the first day.');
      if (to === '') errorAt('query.to', 'Choose the last day.');
      if (from === '' || to === '') return;
      ui.busy('Loading the usage…');
      const answer = await ConsoleApi.usage(who.token, from, to);
      ui.busy('');
      if (closed) return;
      if (answer.status === 400 && /^query\.(from|to)$/.test(answer.data?.field ?? '')) {
        errorAt(answer.data.field, answer.data.reason ?? answer.data.message);
        return;
      }
      const rows = await ui.read('the usage', () => Promise.resolve(answer));
      if (rows === null) return;
      const days = daysOf(from, to);
      const tokens = new Map();
      const calls = new Map();
      for (const row of rows) {
        tokens.set(
          row.day,
          Object.fromEntries(Object.entries(row.tokens).map(([m, t]) => [m, t.input + t.output])),
        );
        calls.set(row.day, row.tool_calls);
      }
      draw($('usage-tokens'), `Tokens per model per day, ${from} to ${to}`, 'tokens', days, tokens);
      draw($('usage-calls'), `Tool calls per day, ${from} to ${to}`, 'tool calls', days, calls);
      $('usage-table').replaceChildren(...tables(ui, rows));
    }

    if ($('usage-to').value === '') {
      const now = Date.now();
      $('usage-to').value = dayOf(now);
      $('usage-from').value = dayOf(now - (FIRST_DAYS - 1) * DAY_MS);
    }
    for (const id of ['usage-tokens', 'usage-calls', 'usage-table']) $(id).replaceChildren();
    $('usage-range').onsubmit = (event) => {
      event.preventDefault();
      void show();
    };
    void show();
    return {
      close() {
        closed = true;
      },
    };
  }

  return { open };
})();
