import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TailLine } from '../../src/schemas/records.ts';
import { faceFor, present, shows, type Face } from '../../src/sessions/faces.ts';
import { publicLayer, sealLayer, tenantSealKey } from '../../src/sessions/sealing.ts';
import type { StoredRecord } from '../../src/storage/log-store.ts';

const root = randomBytes(32);
const key = tenantSealKey(root, `t-${randomUUID()}`);
const stream = randomBytes(36).toString('hex');
let cursor = 0;

function landed(name: string, body: unknown, to: string | null = null): StoredRecord {
  cursor += 1;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    envelope: {
      at: 1_700_000_000_000,
      cursor,
      idem: null,
      kind: { name, version: 1 },
      producer: 'service:authorizer',
      size: Buffer.byteLength(text),
      stream,
      to,
    },
    body: text,
  };
}

const args = { path: '/srv/reports/q3.csv', mode: 'read' };
const result = { content: [{ type: 'text', text: 'revenue: 42' }] };

const allowed = (to: string, layer: unknown = sealLayer(args, key)) =>
  landed(
    'invoke.allowed',
    { turn: 3, cause: 4, call: 'c1', tool: 'read_file', target: to, args: layer, gate: 'g.a.te' },
    to,
  );
const output = () =>
  landed('model.output', {
    turn: 3,
    round: 1,
    text: null,
    tool_calls: [
      { id: 'c1', name: 'read_file', evidence: { mode: 'read' }, args: sealLayer(args, key) },
    ],
    stop: 'tool_use',
    model: 'simulated',
    usage: { input: 1, output: 1 },
  });
const completed = (layer: unknown = sealLayer(result, key)) =>
  landed('invoke.completed', { ok: true, result: layer, error: null, truncated: false });

const publicFace: Face = { kind: 'public', key };
const executor: Face = { kind: 'executor', recipient: 'executor:bot', key };
const opened: Face = { kind: 'opened', key };

function body(line: TailLine | null): Record<string, unknown> {
  if (line === null || !('Ok' in line)) throw new Error(`not an Ok line: ${JSON.stringify(line)}`);
  return line.Ok.body as Record<string, unknown>;
}

describe('faceFor', () => {
  it('gives executors their own face and everyone else the public one (row 66)', () => {
    expect(faceFor('executor:bot', key)).toEqual(executor);
    expect(faceFor('principal:ada', key)).toEqual(publicFace);
    expect(faceFor('console:ops', key)).toEqual(publicFace);
  });
});

describe('shows', () => {
  it('decides every face against every addressing (part D)', () => {
    const table: [Face, string | null, boolean][] = [
      [publicFace, null, true],
      [publicFace, 'executor:bot', false],
      [publicFace, 'connection:github', false],
      [executor, null, true],
      [executor, 'executor:bot', true],
      [executor, 'executor:other', false],
      [executor, 'connection:github', false],
      [opened, 'executor:other', true],
      [opened, 'connection:github', true],
      [opened, null, true],
    ];
    for (const [face, to, expected] of table)
      expect(shows(face, { to }), `${face.kind} ${to}`).toBe(expected);
  });
});

describe('the public face', () => {
  it('never serves an addressed record', () => {
    expect(present(allowed('executor:bot'), publicFace)).toBeNull();
  });

  it('serves call arguments and results as digest and size', () => {
    const calls = body(present(output(), publicFace)).tool_calls as Record<string, unknown>[];
    expect(calls[0]?.args).toEqual(publicLayer(sealLayer(args, key), null));
    expect(calls[0]?.evidence).toEqual({ mode: 'read' });
    expect(body(present(completed(), publicFace)).result).toEqual(
      publicLayer(sealLayer(result, key), null),
    );
    // A completion without a result stays as it is.
    expect(body(present(completed(null), publicFace)).result).toBeNull();
  });

  it('never shows plaintext of a sealed path, sealed or not, for any value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, seal) => {
        const marker = `secret-${randomUUID()}`;
        const layer = { marker, value };
        const line = present(completed(seal ? sealLayer(layer, key) : layer), publicFace);
        expect(JSON.stringify(line)).not.toContain(marker);
        expect(TailLine.safeParse(line).success).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('answers an unsealed layer it has no tenant key to describe with an Err line', () => {
    const keyless: Face = { kind: 'public', key: null };
    const line = present(completed({ plain: 'text' }), keyless);
    expect(line).toMatchObject({ Err: { code: 'unreadable_record' } });
    expect(JSON.stringify(line)).not.toContain('plain');
  });

  it('answers a body that is not JSON with an Err line at its cursor', () => {
    const broken = landed('message.submitted', '{"text":');
    expect(present(broken, publicFace)).toEqual({
      Err: {
        code: 'unreadable_record',
        message: 'the record body is not JSON',
        cursor: broken.envelope.cursor,
      },
    });
  });

  it('passes other kinds and other versions through untouched', () => {
    const message = landed('message.submitted', { text: 'hi', args: 'not a layer' });
    expect(body(present(message, publicFace))).toEqual({ text: 'hi', args: 'not a layer' });
    const v2 = {
      ...completed(),
      envelope: { ...completed().envelope, kind: { name: 'invoke.completed', version: 2 } },
    };
    expect(body(present(v2, publicFace)).result).toHaveProperty('sealed.box');
  });
});

describe('the executor face', () => {
  it('serves the calls addressed to it with their arguments opened and the gate', () => {
    const line = present(allowed('executor:bot'), executor);
    expect(body(line)).toMatchObject({ args, gate: 'g.a.te', target: 'executor:bot' });
  });

  it("never serves another performer's calls", () => {
    expect(present(allowed('executor:other'), executor)).toBeNull();
    expect(present(allowed('connection:github'), executor)).toBeNull();
  });

  it('keeps the other sealed layers sealed', () => {
    const calls = body(present(output(), executor)).tool_calls as Record<string, unknown>[];
    expect(calls[0]?.args).toEqual(publicLayer(sealLayer(args, key), null));
    expect(body(present(completed(), executor)).result).toHaveProperty('sealed.digest');
  });

  it('answers arguments it cannot open with an Err line', () => {
    const foreign = sealLayer(args, tenantSealKey(root, 'another tenant'));
    const record = allowed('executor:bot', foreign);
    expect(present(record, executor)).toEqual({
      Err: {
        code: 'unreadable_record',
        message: expect.stringContaining('does not open') as string,
        cursor: record.envelope.cursor,
      },
    });
    const keyless: Face = { kind: 'executor', recipient: 'executor:bot', key: null };
    expect(present(allowed('executor:bot'), keyless)).toMatchObject({
      Err: { code: 'unreadable_record' },
    });
  });
});

describe('the opened face', () => {
  it('serves every record with its layers opened and the gate stripped', () => {
    const line = body(present(allowed('executor:other'), opened));
    expect(line.args).toEqual(args);
    expect(line).not.toHaveProperty('gate');
    const calls = body(present(output(), opened)).tool_calls as Record<string, unknown>[];
    expect(calls[0]?.args).toEqual(args);
    expect(body(present(completed(), opened)).result).toEqual(result);
  });

  it('says why a layer is unreadable, with its digest and size', () => {
    const foreign = sealLayer(result, tenantSealKey(root, 'another tenant'));
    expect(body(present(completed(foreign), opened)).result).toEqual({
      unreadable: {
        digest: foreign.sealed.digest,
        size: foreign.sealed.size,
        error: expect.stringContaining('does not open') as string,
      },
    });
    const keyless: Face = { kind: 'opened', key: null };
    expect(body(present(completed(), keyless)).result).toMatchObject({
      unreadable: { error: expect.stringContaining('tenant') as string },
    });
  });

  it('serves a body that is not JSON as an Ok line saying so (row 70)', () => {
    const broken = landed('message.submitted', 'not json');
    expect(body(present(broken, opened))).toEqual({
      unreadable: { error: 'the record body is not JSON' },
    });
  });
});
