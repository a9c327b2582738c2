/* A machine's chart on the console, live: the SVG `npm run statecharts` generates from the
 * machine itself (docs/statecharts, served as `/console/statecharts/{machine}`, so the page
 * and the docs cannot differ), with the current state highlighted and the transition just
 * taken marked. Each state's box is a group `g[data-state=<path>]`, each edge a group
 * `g.edge[data-from][data-to]`; the marks are classes the page's style draws. */
/* global document, DOMParser, CSS, ConsoleApi */
'use strict';

// A top-level binding of a classic script: console.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleChart = (() => {
  /**
   * Draws machine `name` into `container` and answers its handle: `show(state)` highlights
   * that state (null: none), names it on the container (`data-state`), marks the state it
   * replaces as the one just left and the edge between them as the one just taken (named
   * on the container as `data-edge`, `<from>><to>`, when the chart draws one).
   */
  async function draw(container, name) {
    container.setAttribute('aria-busy', 'true');
    const text = await ConsoleApi.chart(name);
    container.removeAttribute('aria-busy');
    if (text === null) {
      container.textContent = `The ${name} chart cannot be read.`;
      return { show: () => undefined };
    }
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    svg.setAttribute('role', 'img');
    container.replaceChildren(document.importNode(svg, true));
    const shown = container.firstElementChild;
    const groupOf = (state) => shown.querySelector(`g[data-state="${CSS.escape(state)}"]`);
    const edgeOf = (from, to) =>
      shown.querySelector(`g.edge[data-from="${CSS.escape(from)}"][data-to="${CSS.escape(to)}"]`);
    return {
      show(state) {
        const before = container.dataset.state;
        if (state === (before ?? null)) return;
        for (const group of shown.querySelectorAll('g.current, g.previous, g.taken')) {
          group.classList.remove('current', 'previous', 'taken');
        }
        // The state just left stays marked, and the edge from it, so the step just taken shows.
        if (before !== undefined) groupOf(before)?.classList.add('previous');
        const edge = before === undefined || state === null ? null : edgeOf(before, state);
        edge?.classList.add('taken');
        if (edge) container.dataset.edge = `${before}>${state}`;
        else delete container.dataset.edge;
        if (state === null) {
          delete container.dataset.state;
          return;
        }
        container.dataset.state = state;
        const group = groupOf(state);
        if (group === null) return;
        group.classList.add('current');
        // Bring the state into the pane's view, without scrolling the page around it.
        const box = group.getBoundingClientRect();
        const pane = container.getBoundingClientRect();
        container.scrollLeft += box.left + box.width / 2 - (pane.left + pane.width / 2);
        container.scrollTop += box.top + box.height / 2 - (pane.top + pane.height / 2);
      },
    };
  }

  /**
   * Like `draw`, but answers at once: `show` may be called before the chart has arrived,
   * and the last two states asked are shown when it does (so the step just taken shows).
   */
  function live(container, name) {
    let drawn = null;
    const asked = [];
    void draw(container, name).then((handle) => {
      drawn = handle;
      for (const state of asked.splice(0)) handle.show(state);
    });
    return {
      show(state) {
        if (drawn !== null) return drawn.show(state);
        asked.push(state);
        if (asked.length > 2) asked.shift();
      },
    };
  }

  return { draw, live };
})();
