/* The session log, virtualised: every record is kept as data (the newest KEEP of them), and
 * only a window of WINDOW records is in the document, so a log that lands a thousand
 * records a second costs the browser a bounded number of nodes and one render per frame.
 * The window follows the newest record while the reader is at the bottom; scrolling to an
 * edge of the window, or moving through it by keyboard, renders the records beyond it.
 *
 * Keyboard: the records are one tab stop (the one last focused, else the newest); the up
 * and down arrows move by a record, Page Up and Page Down by ten, Home to the oldest kept,
 * End to the newest. The list names the newest record shown in `data-last-cursor`, and the
 * range shown and the count kept in the status line beside it. Plain browser JavaScript. */
/* global requestAnimationFrame */
'use strict';

// A top-level binding of a classic script: session.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleLog = (() => {
  /** Records in the document at most. */
  const WINDOW = 60;
  /** Records kept as data at most; the oldest leave in slices of SLICE. */
  const KEEP = 10_000;
  const SLICE = 1_000;
  /** How close to an edge of the list (px) counts as at it. */
  const EDGE = 24;
  const KEYS = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };

  /**
   * A log in `list` (an `ol`), each record drawn by `render(landed)`, its state told in
   * `status` (a live region) and a way back to the newest record in `latest` (a button).
   */
  function create(list, status, latest, render) {
    let records = [];
    /** Records no longer kept, before `records[0]`. */
    let dropped = 0;
    /** The window in the document: `records[start .. end)`. */
    let start = 0;
    let end = 0;
    let follow = true;
    let focused = null;
    let frame = false;

    const itemAt = (index) => {
      const item = render(records[index]);
      item.tabIndex = -1;
      item.dataset.index = String(index + dropped);
      item.setAttribute('aria-posinset', String(index + dropped + 1));
      return item;
    };
    const indexOf = (item) => Number(item.dataset.index) - dropped;

    /** Renders `records[from .. to)`, keeping the items already shown, scroll anchored. */
    function show(from, to) {
      const anchor = list.firstElementChild;
      const before = anchor?.offsetTop ?? 0;
      const shown = [...list.children];
      for (const item of shown) {
        const i = indexOf(item);
        if (i < from || i >= to) item.remove();
      }
      const head = [];
      for (let i = from; i < Math.min(start, to); i++) head.push(itemAt(i));
      list.prepend(...head);
      const tail = [];
      for (let i = Math.max(end, from); i < to; i++) tail.push(itemAt(i));
      list.append(...tail);
      start = from;
      end = to;
      if (anchor?.isConnected) list.scrollTop += anchor.offsetTop - before;
      describe();
    }

    function describe() {
      const last = records[end - 1]?.envelope.cursor;
      if (last !== undefined) list.dataset.lastCursor = String(last);
      const total = records.length;
      const first = records[start]?.envelope.cursor;
      status.textContent =
        total === 0
          ? 'No records yet.'
          : `${total + dropped} records; showing #${first} to #${last}` +
            (dropped > 0 ? ` (the newest ${total} are kept on this page).` : '.');
      const behind = total - end;
      latest.hidden = behind === 0;
      latest.textContent = `${behind} newer record${behind === 1 ? '' : 's'}: show the newest`;
      // One tab stop: the record last focused while it is shown, else the newest shown.
      const stop = focused?.isConnected ? focused : list.lastElementChild;
      const setSize = String(total + dropped);
      for (const item of list.children) {
        item.setAttribute('aria-setsize', setSize);
        item.tabIndex = item === stop ? 0 : -1;
      }
    }

    function flush() {
      frame = false;
      if (records.length > KEEP) {
        const gone = records.length - KEEP + SLICE;
        records = records.slice(gone);
        dropped += gone;
        start = Math.max(0, start - gone);
        end = Math.max(start, end - gone);
        for (const item of [...list.children]) if (indexOf(item) < 0) item.remove();
      }
      if (follow) {
        show(Math.max(0, records.length - WINDOW), records.length);
        list.scrollTop = list.scrollHeight;
      } else describe();
    }

    const soon = () => {
      if (frame) return;
      frame = true;
      requestAnimationFrame(flush);
    };

    /** Brings record `index` into the window and focuses it. */
    function focus(index) {
      const i = Math.max(0, Math.min(records.length - 1, index));
      if (i < start || i >= end) {
        const from = Math.max(0, Math.min(i - WINDOW / 2, records.length - WINDOW));
        show(from, Math.min(records.length, from + WINDOW));
      }
      follow = i === records.length - 1;
      const item = [...list.children].find((node) => indexOf(node) === i);
      if (item === undefined) return;
      if (focused?.isConnected) focused.tabIndex = -1;
      focused = item;
      if (follow) list.scrollTop = list.scrollHeight;
      item.tabIndex = 0;
      item.focus();
    }

    list.addEventListener('keydown', (event) => {
      const item = event.target.closest?.('li.record');
      if (!item) return;
      const i = indexOf(item);
      if (event.key in KEYS) focus(i + KEYS[event.key]);
      else if (event.key === 'Home') focus(0);
      else if (event.key === 'End') focus(records.length - 1);
      else return;
      event.preventDefault();
    });

    list.addEventListener('scroll', () => {
      const bottom = list.scrollHeight - list.scrollTop - list.clientHeight < EDGE;
      if (list.scrollTop < EDGE && start > 0) {
        const from = Math.max(0, start - WINDOW / 2);
        follow = false;
        show(from, Math.min(records.length, from + WINDOW));
      } else if (!bottom) follow = false;
      else if (follow) return;
      else if (end < records.length) {
        const to = Math.min(records.length, end + WINDOW / 2);
        show(Math.max(0, to - WINDOW), to);
      } else follow = true;
    });

    latest.addEventListener('click', () => {
      follow = true;
      flush();
      focus(records.length - 1);
    });

    return {
      /** Takes one landed record; it shows within a frame when the window follows. */
      add(landed) {
        records.push(landed);
        soon();
      },
      /** Replaces every record with `landed` (the opened audit), following the newest. */
      replace(landed) {
        records = [...landed];
        dropped = 0;
        start = 0;
        end = 0;
        follow = true;
        list.replaceChildren();
        flush();
      },
      /** The records kept, oldest first. */
      records: () => records,
    };
  }

  return { create };
})();
