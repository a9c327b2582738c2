import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SessionTokenParams, StreamId, parseStreamId } from '../../src/schemas/common.ts';
import {
  AppendBody,
  AuditQuery,
  KIND_NAME,
  Kind,
  OfferedRecord,
  STAMPED_FIELDS,
  TailLine,
  TailQuery,
} from '../../src/schemas/records.ts';
import { accepted, refusals } from './refusals.ts';

const hex = (chars: number) =>
  randomBytes(Math.ceil(chars / 2))
    .toString('hex')
    .slice(0, chars);
const NAME_REASON = 'must be dotted lowercase segments such as message.submitted (a-z, 0-9, _)';

describe('kind names (decisions row 15)', () => {
  it.each(['a.b', 'message.submitted', 'a1_b.c_2.d', 'x.y_.z9'])('takes %s', (name) => {
    expect(KIND_NAME.test(name)).toBe(true);
    expect(refusals(Kind, { name, version: 1 })).toEqual([]);
  });

  it.each(['a', 'A.b', 'a.B', 'a.', '.a', 'a..b', '1a.b', 'a.1b', 'a-b.c', '_a.b', 'a.b '])(
    'refuses %j naming the field',
    (name) => {
      expect(KIND_NAME.test(name)).toBe(false);
      expect(refusals(Kind, { name, version: 1 })).toEqual([
        { field: 'body.name', reason: NAME_REASON },
      ]);
    },
  );

  it('takes a 64-character name and refuses 65', () => {
    const name64 = `a.${'b'.repeat(62)}`;
    expect(name64).toHaveLength(64);
    expect(refusals(Kind, { name: name64, version: 1 })).toEqual([]);
    expect(refusals(Kind, { name: `${name64}c`, version: 1 })).toEqual([
      { field: 'body.name', reason: 'must be at most 64 characters' },
    ]);
  });

  it('takes versions 1 to 2^31-1 and refuses one past either end', () => {
    expect(refusals(Kind, { name: 'a.b', version: 1 })).toEqual([]);
    expect(refusals(Kind, { name: 'a.b', version: 2 ** 31 - 1 })).toEqual([]);
    expect(refusals(Kind, { name: 'a.b', version: 0 })).toEqual([
      { field: 'body.version', reason: 'must be at least 1' },
    ]);
    expect(refusals(Kind, { name: 'a.b', version: 2 ** 31 })).toEqual([
      { field: 'body.version', reason: 'must be at most 2147483647' },
    ]);
    expect(refusals(Kind, { name: 'a.b', version: 1.5 })).toEqual([
      { field: 'body.version', reason: 'must be an integer' },
    ]);
    expect(refusals(Kind, { name: 'a.b' })).toEqual([
      { field: 'body.version', reason: 'is required' },
    ]);
  });
});

describe('offered records (2.4, decisions row 14)', () => {
  const offer = { kind: { name: 'message.submitted', version: 1 }, body: { text: 'hi' } };

  it('takes kind and body, any JSON body included', () => {
    expect(accepted(OfferedRecord, offer)).toEqual(offer);
    expect(refusals(OfferedRecord, { ...offer, body: null })).toEqual([]);
    expect(refusals(OfferedRecord, { ...offer, body: [1, 'x'] })).toEqual([]);
  });

  it.each(STAMPED_FIELDS)('refuses a stamped %s, naming it', (field) => {
    const [refusal, ...rest] = refusals(AppendBody, [offer, { ...offer, [field]: null }]);
    expect(rest).toEqual([]);
    expect(refusal?.field).toBe(`body.1.${field}`);
    expect(refusal?.reason).toMatch(/^is not sent: .*the service stamps cursor, at, producer/);
  });

  it('refuses any other extra field and names each one', () => {
    expect(refusals(AppendBody, [{ ...offer, cursor: 3, foo: 1 }]).map((r) => r.field)).toEqual([
      'body.0.cursor',
      'body.0.foo',
    ]);
  });

  it('requires the body and the kind', () => {
    expect(refusals(AppendBody, [{ kind: offer.kind }])).toEqual([
      { field: 'body.0.body', reason: 'is required' },
    ]);
    expect(refusals(AppendBody, [{ body: {} }])).toEqual([
      { field: 'body.0.kind', reason: 'is required' },
    ]);
  });

  it('refuses an empty batch and a body that is not an array', () => {
    expect(refusals(AppendBody, [])).toEqual([
      { field: 'body', reason: 'must hold at least one record' },
    ]);
    expect(refusals(AppendBody, offer)).toEqual([{ field: 'body', reason: 'must be an array' }]);
  });
});

describe('stream ids (2.1, decisions rows 4 to 6)', () => {
  it('takes 72 hex in any case and answers lowercase', () => {
    const id = hex(72);
    expect(accepted(StreamId, id.toUpperCase())).toBe(id);
    expect(parseStreamId(id.toUpperCase())).toBe(id);
  });

  it.each([71, 73, 64])('refuses %d hex characters', (length) => {
    expect(refusals(StreamId, hex(length))).toEqual([
      { field: 'body', reason: 'must be 72 hex characters' },
    ]);
    expect(parseStreamId(hex(length))).toBeNull();
  });

  it('refuses a non-hex character', () => {
    expect(parseStreamId(`${hex(71)}g`)).toBeNull();
  });

  it('takes 64 or 72 hex on the token path and refuses others as params.id', () => {
    expect(accepted(SessionTokenParams, { id: hex(64).toUpperCase() }).id).toMatch(
      /^[0-9a-f]{64}$/,
    );
    expect(refusals(SessionTokenParams, { id: hex(72) }, 'params')).toEqual([]);
    for (const length of [63, 65, 71, 73]) {
      expect(refusals(SessionTokenParams, { id: hex(length) }, 'params')).toEqual([
        { field: 'params.id', reason: 'must be 64 or 72 hex characters' },
      ]);
    }
  });
});

describe('tail and audit queries (4.2, 4.3, decisions rows 68 and 70)', () => {
  it('reads from and to as integers', () => {
    expect(accepted(TailQuery, { from: '0' })).toEqual({ from: 0 });
    expect(accepted(TailQuery, { from: '5', to: '9' })).toEqual({ from: 5, to: 9 });
  });

  it('refuses a missing or unparsable from and a to below 1', () => {
    expect(refusals(TailQuery, {}, 'query')).toEqual([
      { field: 'query.from', reason: 'is required' },
    ]);
    for (const from of ['', 'x', '1.5', '1e3']) {
      expect(refusals(TailQuery, { from }, 'query')).toEqual([
        { field: 'query.from', reason: 'must be an integer' },
      ]);
    }
    expect(refusals(TailQuery, { from: '-1' }, 'query')).toEqual([
      { field: 'query.from', reason: 'must be at least 0' },
    ]);
    expect(refusals(TailQuery, { from: '1', to: '0' }, 'query')).toEqual([
      { field: 'query.to', reason: 'must be at least 1' },
    ]);
  });

  it('takes opened 1, 0 or nothing and refuses anything else', () => {
    expect(refusals(AuditQuery, {}, 'query')).toEqual([]);
    expect(refusals(AuditQuery, { opened: '1' }, 'query')).toEqual([]);
    expect(refusals(AuditQuery, { opened: '0' }, 'query')).toEqual([]);
    expect(refusals(AuditQuery, { opened: 'yes' }, 'query')).toEqual([
      { field: 'query.opened', reason: 'must be 1 (opened) or 0 (plain)' },
    ]);
  });

  it('reads tail lines as Ok or Err', () => {
    const envelope = {
      at: 1,
      cursor: 1,
      idem: null,
      kind: { name: 'session.opened', version: 1 },
      producer: 'service:session',
      size: 2,
      stream: hex(72),
      to: null,
    };
    expect(refusals(TailLine, { Ok: { envelope, body: {} } })).toEqual([]);
    expect(
      refusals(TailLine, { Err: { code: 'token_expired', message: 'm', cursor: null } }),
    ).toEqual([]);
    expect(refusals(TailLine, { Ok: { envelope: { ...envelope, cursor: 0 }, body: {} } })).toEqual([
      { field: 'body.Ok.envelope.cursor', reason: 'must be at least 1' },
    ]);
  });
});
