/* The session's tool calls and the state of each call's claim actor (the claim machine,
 * interface 3.4), read from the records as they land, since no endpoint serves claims: a
 * model.output's tool calls start `unclaimed`; an invoke.claimed (body `call`, `cause`)
 * makes its call `claimed`; the invoke.completed under idem `call:<cause>` makes it
 * `answered`. An invoke.denied call has no claim actor: it shows `denied`.
 *
 * The public face skips the invoke.allowed records (addressed to the executor), so a
 * completion of a call never claimed (an MCP connection's, or the service's timeout) names
 * a cause this page has not seen: it is taken as the oldest such call's, which is right
 * whenever completions of unclaimed calls land in call order. The opened audit shows the
 * invoke.allowed records, and there every cause is known. Plain browser JavaScript. */
/* global document */
'use strict';

// A top-level binding of a classic script: session.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleClaims = (() => {
  /** Calls listed at most: older ones leave the list. */
  const SHOWN = 20;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /**
   * Follows the calls into `list` (an `ol`), with the newest call's claim on `chart` (a
   * ConsoleChart handle) and its name in `caption`. Answers `{record(landed), open()}`:
   * `open()` counts the newest round's calls still waiting for a completion or a denial.
   */
  function create(list, chart, caption) {
    /** Oldest first: `{id, tool, cause, state, item, badge}`. */
    const calls = [];
    let round = [];

    function set(call, state, detail) {
      call.state = state;
      call.item.dataset.claim = state;
      call.badge.textContent = detail === undefined ? state : `${state} · ${detail}`;
      if (call === calls.at(-1)) chart.show(state);
    }

    function add(call) {
      const item = el('li', 'call');
      item.dataset.call = call.id;
      const badge = el('span', 'claim-state');
      item.append(el('strong', null, call.name), ' ', el('code', null, call.id), ' ', badge);
      const entry = { id: call.id, tool: call.name, cause: null, state: null, item, badge };
      calls.push(entry);
      list.append(item);
      if (calls.length > SHOWN) calls.shift().item.remove();
      chart.show(null);
      caption.textContent = call.id;
      set(entry, 'unclaimed');
      return entry;
    }

    /** The newest call with this id (ids are the model's, unique within a round). */
    const named = (id) => calls.findLast((call) => call.id === id);
    const waiting = (call) => call.state === 'unclaimed' || call.state === 'claimed';

    function record(landed) {
      const { envelope, body } = landed;
      switch (envelope.kind.name) {
        case 'model.output':
          if (Array.isArray(body?.tool_calls) && body.tool_calls.length > 0) {
            round = body.tool_calls.map(add);
          }
          return;
        case 'invoke.allowed': {
          const call = named(body?.call);
          if (call !== undefined) call.cause = envelope.cursor;
          return;
        }
        case 'invoke.denied': {
          const call = named(body?.call);
          if (call !== undefined) set(call, 'denied', body.reason);
          return;
        }
        case 'invoke.claimed': {
          const call = named(body?.call);
          if (call === undefined || call.state === 'answered') return;
          call.cause = body.cause;
          set(call, 'claimed', body.attempt);
          return;
        }
        case 'invoke.completed': {
          const cause = Number(/^call:(\d+)$/.exec(envelope.idem ?? '')?.[1]);
          const call =
            calls.find((c) => c.cause === cause) ??
            calls.find((c) => c.cause === null && c.state === 'unclaimed');
          if (call !== undefined && waiting(call)) {
            call.cause = cause;
            set(call, 'answered', body?.ok === false ? (body.error ?? 'failed') : 'ok');
          }
          return;
        }
        default:
      }
    }

    return { record, open: () => round.filter(waiting).length };
  }

  return { create };
})();
