import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  completionIdem,
  filterBatch,
  holderIdem,
  type OfferedEnvelope,
  type WriterCredential,
} from '../../src/sessions/write-filter.ts';
import type { Envelope, Kind } from '../../src/schemas/records.ts';

const principal: WriterCredential = {
  audience: 'session',
  producer: 'principal:ada',
  scopes: new Set(['read', 'append']),
  key: 'idk123',
};

const kind = (name: string, version = 1): Kind => ({ name, version });

/** What the intake stamps for record `index` under `credential`. */
function stamped(credential: WriterCredential, k: Kind, index: number): OfferedEnvelope {
  return {
    kind: k,
    producer: credential.producer,
    to: null,
    idem: holderIdem(credential.key, index),
  };
}

const allowed = [kind('message.submitted'), kind('turn.cancel')];
const refusedKinds = [
  kind('model.output'),
  kind('invoke.completed'),
  kind('session.archived'),
  kind('session.opened'),
  kind('weather.report'),
  kind('message.submitted', 2),
];

describe('the write filter (decisions part D, row 85)', () => {
  it('lets a principal or console token land message.submitted and turn.cancel', () => {
    for (const credential of [principal, { ...principal, producer: 'console:owner' }]) {
      const batch = allowed.map((k, i) => stamped(credential, k, i));
      expect(filterBatch(credential, batch)).toEqual({ accepted: true });
    }
  });

  it('refuses every other kind, naming the first refused index', () => {
    for (const refused of refusedKinds) {
      const batch = [
        stamped(principal, allowed[0] ?? kind('x.y'), 0),
        stamped(principal, refused, 1),
      ];
      const verdict = filterBatch(principal, batch);
      expect(verdict).toMatchObject({ accepted: false, index: 1, kind: refused });
    }
  });

  it('refuses an addressed record, a foreign producer, a wrong idem slot and a token that may not append', () => {
    const base = stamped(principal, kind('message.submitted'), 0);
    const cases: [WriterCredential, OfferedEnvelope][] = [
      [principal, { ...base, to: 'executor:x' }],
      [principal, { ...base, producer: 'principal:eve' }],
      [principal, { ...base, idem: holderIdem(principal.key, 1) }],
      [principal, { ...base, idem: null }],
      [{ ...principal, scopes: new Set(['read']) }, base],
      [{ ...principal, audience: 'grant' }, base],
    ];
    for (const [credential, envelope] of cases) {
      const verdict = filterBatch(credential, [envelope]);
      expect(verdict.accepted, JSON.stringify(envelope)).toBe(false);
    }
  });

  it('accepts a batch exactly when every record is an allowed kind in its own slot', () => {
    const kinds = fc.constantFrom(...allowed, ...refusedKinds);
    fc.assert(
      fc.property(fc.array(kinds, { minLength: 1, maxLength: 20 }), (batch) => {
        const verdict = filterBatch(
          principal,
          batch.map((k, i) => stamped(principal, k, i)),
        );
        const firstRefused = batch.findIndex(
          (k) => !allowed.some((a) => a.name === k.name && a.version === k.version),
        );
        if (firstRefused === -1) expect(verdict).toEqual({ accepted: true });
        else expect(verdict).toMatchObject({ accepted: false, index: firstRefused });
      }),
    );
  });

  describe('executors', () => {
    const grant: WriterCredential = {
      audience: 'grant',
      producer: 'executor:runner',
      scopes: new Set(['complete']),
      key: completionIdem(7),
      cause: 7,
    };
    const call: Envelope = {
      at: 1,
      cursor: 7,
      idem: 'svc:2:1',
      kind: kind('invoke.allowed'),
      producer: 'service:authorizer',
      size: 10,
      stream: 'a'.repeat(72),
      to: 'executor:runner',
    };
    const completion: OfferedEnvelope = {
      kind: kind('invoke.completed'),
      producer: 'executor:runner',
      to: null,
      idem: completionIdem(7),
    };

    it('lets a grant land one invoke.completed for the call addressed to it', () => {
      expect(filterBatch(grant, [completion], call)).toEqual({ accepted: true });
    });

    it('refuses a second record, another kind, another call or a call addressed elsewhere', () => {
      expect(filterBatch(grant, [completion, completion], call)).toMatchObject({ index: 1 });
      expect(
        filterBatch(grant, [{ ...completion, kind: kind('message.submitted') }], call),
      ).toMatchObject({
        accepted: false,
      });
      expect(filterBatch(grant, [completion], { ...call, cursor: 8 })).toMatchObject({
        accepted: false,
      });
      expect(filterBatch(grant, [completion], null)).toMatchObject({ accepted: false });
      expect(filterBatch(grant, [completion], { ...call, to: 'executor:other' })).toMatchObject({
        accepted: false,
      });
      expect(
        filterBatch(grant, [completion], { ...call, kind: kind('model.output') }),
      ).toMatchObject({
        accepted: false,
      });
      expect(filterBatch(grant, [{ ...completion, idem: 'call:8' }], call)).toMatchObject({
        accepted: false,
      });
    });

    it('refuses every append under an executor session token', () => {
      const token: WriterCredential = {
        ...grant,
        audience: 'session',
        scopes: new Set(['read', 'claim']),
      };
      const verdict = filterBatch(token, [completion], call);
      expect(verdict).toMatchObject({ accepted: false, index: 0 });
      if (!verdict.accepted) expect(verdict.reason).toContain('grant');
    });
  });

  it('never lets a service producer in through a client credential', () => {
    const service: WriterCredential = { ...principal, producer: 'service:turn' };
    expect(filterBatch(service, [stamped(service, kind('message.submitted'), 0)])).toMatchObject({
      accepted: false,
    });
  });
});
