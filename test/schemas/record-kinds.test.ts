import { describe, expect, it } from 'vitest';
import {
  RECORD_KIND_NAMES,
  RECORD_KIND_VERSION,
  bodySchemaFor,
  isRecordKindName,
  kindKey,
  recordKinds,
  type RecordKindName,
} from '../../src/schemas/record-kinds.ts';
import { AppendBody, KIND_NAME } from '../../src/schemas/records.ts';
import { toFieldErrors } from '../../src/schemas/issues.ts';
import { refusals } from './refusals.ts';

const digest = 'b'.repeat(64);
const sealed = { sealed: { digest: `sha256:${digest}`, size: 12 } };
const usage = { input: 10, output: 5 };

/** A well-formed body of every kind of part B: the record must name them all. */
const samples: Record<RecordKindName, unknown> = {
  'session.opened': {
    install: 'in_1',
    principal: 'ada',
    executor: null,
    tools: [
      { name: 'search', source: 'vendor' },
      { name: 'crm__lookup', source: 'connection:crm' },
    ],
    params: { temperature: 0.2 },
    rounds: 16,
    config: digest,
  },
  'message.submitted': { text: 'hello' },
  'turn.cancel': { turn: null },
  'turn.started': { inputs: [2, 3], rounds: 16 },
  'model.output': {
    turn: 4,
    round: 1,
    text: null,
    tool_calls: [{ id: 'c1', name: 'search', evidence: { q: 'x' }, args: sealed }],
    stop: 'tool_use',
    model: 'simulated',
    usage,
  },
  'invoke.allowed': {
    turn: 4,
    cause: 5,
    call: 'c1',
    tool: 'search',
    target: 'executor:worker',
    args: { q: 'x' },
    evidence: { q: 'x' },
    timeout: 60_000,
    result_limit: 65_536,
    gate: 'eyJ.x.y',
  },
  'invoke.denied': {
    turn: 4,
    call: 'c2',
    tool: 'delete',
    reason: 'deny',
    item: 0,
    evidence: {},
  },
  'invoke.claimed': { cause: 6, call: 'c1', attempt: 'first', expires: 1_700_000_000_000 },
  'invoke.completed': { ok: true, result: { content: [{ type: 'text', text: 'found' }] } },
  'inference.failed': { turn: 4, round: 1, attempt: 1, retry_in: 1000, error: 'simulated failure' },
  'compaction.requested': { turn: 4, prompt_tokens: 100_001, compact_at: 100_000, through: 9 },
  'compaction.completed': {
    requested: 10,
    through: 9,
    summary: 'They talked.',
    tokens_before: 100_001,
    tokens_after: 120,
    usage,
  },
  'turn.ended': {
    turn: 4,
    reason: 'completed',
    rounds: 2,
    usage: { simulated: usage },
    error: null,
  },
  'session.archived': { by: 'console:ada' },
};

describe('the record-kind registry (decisions part B, row 14)', () => {
  it('registers every kind of part B under a well-formed name', () => {
    expect(RECORD_KIND_NAMES).toHaveLength(14);
    for (const name of RECORD_KIND_NAMES) expect(KIND_NAME.test(name), name).toBe(true);
  });

  it.each(Object.entries(samples))('reads a well-formed %s body', (name, body) => {
    expect(isRecordKindName(name)).toBe(true);
    expect(refusals(recordKinds[name as RecordKindName], body)).toEqual([]);
  });

  it('keys a kind by name and version as one unit', () => {
    expect(kindKey('message.submitted', 1)).toBe('message.submitted@1');
    expect(bodySchemaFor({ name: 'message.submitted', version: RECORD_KIND_VERSION })).toBe(
      recordKinds['message.submitted'],
    );
    expect(bodySchemaFor({ name: 'message.submitted', version: 2 })).toBeUndefined();
    expect(bodySchemaFor({ name: 'custom.note', version: 1 })).toBeUndefined();
    expect(isRecordKindName('toString')).toBe(false);
  });

  it('names the body field the way the intake reports it', () => {
    const batch = [
      { kind: { name: 'message.submitted', version: 1 }, body: { text: 'ok' } },
      { kind: { name: 'message.submitted', version: 1 }, body: { text: '' } },
    ];
    const offers = AppendBody.parse(batch);
    const fields = offers.flatMap((offer, index) => {
      const result = bodySchemaFor(offer.kind)?.safeParse(offer.body);
      if (result === undefined || result.success) return [];
      return toFieldErrors(result.error, 'body', [index, 'body']);
    });
    expect(fields).toEqual([{ field: 'body.1.body.text', reason: 'must not be empty' }]);
  });

  it('bounds message text at 1 to 100000 characters', () => {
    const schema = recordKinds['message.submitted'];
    expect(refusals(schema, { text: 'x'.repeat(100_000) })).toEqual([]);
    expect(refusals(schema, { text: 'x'.repeat(100_001) })).toEqual([
      { field: 'body.text', reason: 'must be at most 100000 characters' },
    ]);
  });

  it('fills a completion: no error, not truncated; and takes a sealed or null result', () => {
    const parsed = recordKinds['invoke.completed'].parse({ ok: false, result: null });
    expect(parsed).toEqual({ ok: false, result: null, error: null, truncated: false });
    expect(refusals(recordKinds['invoke.completed'], { ok: true, result: sealed })).toEqual([]);
    expect(refusals(recordKinds['invoke.completed'], { ok: true, result: 'done' })).toEqual([
      { field: 'body.result', reason: 'must be an MCP CallToolResult ({content: [...]}) or null' },
    ]);
  });

  it('refuses a turn.cancel naming a cursor below 1 and defaults it to null', () => {
    expect(recordKinds['turn.cancel'].parse({})).toEqual({ turn: null });
    expect(refusals(recordKinds['turn.cancel'], { turn: 0 })).toEqual([
      { field: 'body.turn', reason: 'must be at least 1' },
    ]);
  });
});
