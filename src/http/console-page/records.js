/* How the console shows a landed record: its cursor, time, kind and producer, then what
 * its kind says (decisions part B), field by field. A sealed value (`{"sealed": {digest,
 * size}}`: call arguments and tool results on the public face) is shown as sealed with its
 * digest and size, never as if it were the value; on the opened audit the value itself, or
 * `{"unreadable": {…, error}}` as why it cannot be opened. Plain browser JavaScript, no build step;
 * every text goes in through textContent. */
/* global document */
'use strict';

// A top-level binding of a classic script: console.js reads it.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
const ConsoleRecords = (() => {
  /** Per kind, the body fields worth a line, in order, with their labels. */
  const FIELDS = {
    'session.opened': [
      ['install', 'install'],
      ['principal', 'principal'],
      ['executor', 'executor'],
      ['rounds', 'rounds'],
    ],
    'message.submitted': [['text', 'text']],
    'turn.cancel': [['turn', 'turn']],
    'turn.started': [
      ['inputs', 'inputs'],
      ['rounds', 'rounds'],
    ],
    'model.output': [
      ['text', 'text'],
      ['stop', 'stop'],
      ['model', 'model'],
      ['round', 'round'],
      ['usage', 'usage'],
    ],
    'invoke.allowed': [
      ['tool', 'tool'],
      ['call', 'call'],
      ['target', 'target'],
      ['args', 'args'],
      ['evidence', 'evidence'],
    ],
    'invoke.denied': [
      ['tool', 'tool'],
      ['call', 'call'],
      ['reason', 'reason'],
      ['evidence', 'evidence'],
    ],
    'invoke.claimed': [
      ['call', 'call'],
      ['attempt', 'attempt'],
      ['expires', 'expires'],
    ],
    'invoke.completed': [
      ['ok', 'ok'],
      ['result', 'result'],
      ['error', 'error'],
      ['truncated', 'truncated'],
    ],
    'inference.failed': [
      ['attempt', 'attempt'],
      ['retry_in', 'retry in (ms)'],
      ['error', 'error'],
    ],
    'compaction.requested': [
      ['prompt_tokens', 'prompt tokens'],
      ['compact_at', 'compact at'],
      ['through', 'through'],
    ],
    'compaction.completed': [
      ['summary', 'summary'],
      ['tokens_before', 'tokens before'],
      ['tokens_after', 'tokens after'],
    ],
    'turn.ended': [
      ['reason', 'reason'],
      ['rounds', 'rounds'],
      ['usage', 'usage'],
      ['error', 'error'],
    ],
    'session.archived': [['by', 'by']],
  };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const isSealed = (value) =>
    typeof value === 'object' && value !== null && typeof value.sealed === 'object';

  const isUnreadable = (value) =>
    typeof value === 'object' && value !== null && typeof value.unreadable === 'object';

  /**
   * A value as the page shows it: sealed values as such, a layer the opened audit could not
   * open with why, strings as they are, else JSON.
   */
  function value(v) {
    if (isSealed(v)) {
      const node = el('span', 'sealed', `sealed · ${v.sealed.size} bytes · ${v.sealed.digest}`);
      node.title = 'Sealed: the public face carries its digest and size, not the value.';
      return node;
    }
    if (isUnreadable(v)) {
      return el('span', 'sealed unreadable', `cannot be opened: ${v.unreadable.error}`);
    }
    if (typeof v === 'string') return el('span', 'text', v);
    return el('code', null, JSON.stringify(v));
  }

  function field(list, label, v) {
    if (v === undefined) return;
    list.append(el('dt', null, label));
    const dd = el('dd');
    dd.append(value(v));
    list.append(dd);
  }

  /** A model output's tool calls, one line each. */
  function toolCalls(calls) {
    const list = el('ul', 'calls');
    for (const call of calls) {
      const item = el('li');
      item.append(el('strong', null, call.name), ' ', el('code', null, call.id), ' args ');
      item.append(value(call.args));
      if (call.evidence !== undefined && call.evidence !== null) {
        item.append(' evidence ', value(call.evidence));
      }
      list.append(item);
    }
    return list;
  }

  /** The list item of one landed record (`{envelope, body}`). */
  function render(landed) {
    const { envelope, body } = landed;
    const kind = envelope.kind.name;
    const item = el('li', 'record');
    item.dataset.cursor = String(envelope.cursor);
    item.dataset.kind = kind;
    const head = el('div', 'record-head');
    const time = el('time', null, new Date(envelope.at).toLocaleTimeString());
    time.dateTime = new Date(envelope.at).toISOString();
    head.append(el('span', 'cursor', `#${envelope.cursor}`), time, el('span', 'kind', kind));
    head.append(el('span', 'producer', envelope.producer));
    if (envelope.to !== null) head.append(el('span', 'to', `→ ${envelope.to}`));
    item.append(head);
    const list = el('dl');
    const known = FIELDS[kind];
    if (known === undefined || typeof body !== 'object' || body === null || isUnreadable(body)) {
      field(list, 'body', body);
    } else {
      for (const [name, label] of known) field(list, label, body[name]);
    }
    item.append(list);
    if (kind === 'model.output' && Array.isArray(body?.tool_calls) && body.tool_calls.length > 0) {
      item.append(toolCalls(body.tool_calls));
    }
    return item;
  }

  return { render };
})();
