import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { vendorHash } from '../../src/consent/documents.ts';
import {
  deriveInstallKey,
  planInstallKey,
  recoverInstallKey,
} from '../../src/consent/install-key.ts';
import { hashCredential } from '../../src/auth/key-material.ts';
import { credentialLookup } from '../../src/auth/opaque.ts';
import { systemEntropy } from '../../src/clock.ts';
import { VendorDocument } from '../../src/schemas/vendor.ts';

const doc = VendorDocument.parse({
  appdoc: 1,
  name: 'Hash me',
  description: 'é and 😀 and "quotes"',
  tools: [
    {
      name: 't',
      description: 'd',
      input_schema: { type: 'object', properties: { n: { type: 'number', maximum: 1e21 } } },
      output_schema: { type: 'object' },
    },
  ],
});

describe('the vendor hash (decisions row 21)', () => {
  it('is the SHA-256 of the RFC 8785 form, appdoc included', () => {
    // RFC 8785 by hand for this document: keys sorted by code unit, no spaces, 1e21 as "1e+21".
    const jcs =
      '{"appdoc":1,"description":"é and 😀 and \\"quotes\\"","name":"Hash me","tools":[{"description":"d","input_schema":{"properties":{"n":{"maximum":1e+21,"type":"number"}},"type":"object"},"name":"t","output_schema":{"type":"object"},"result_limit":null,"timeout":null}]}';
    expect(vendorHash(doc)).toBe(createHash('sha256').update(jcs, 'utf8').digest('hex'));
  });

  it('does not depend on key order, and changes with any field, appdoc included', () => {
    const reordered = JSON.parse(
      JSON.stringify({ tools: doc.tools, name: doc.name, description: doc.description, appdoc: 1 }),
    ) as VendorDocument;
    expect(vendorHash(reordered)).toBe(vendorHash(doc));
    expect(vendorHash({ ...doc, name: 'Hash me!' })).not.toBe(vendorHash(doc));
    expect(vendorHash({ ...doc, appdoc: 2 } as unknown as VendorDocument)).not.toBe(
      vendorHash(doc),
    );
  });
});

describe('the derived install key', () => {
  const secret = `ps_${randomBytes(32).toString('base64url')}`;
  const request = `rq_${randomUUID()}`;

  it('is an install key the install audience accepts, hashed as planned', () => {
    const plan = planInstallKey(secret, request, systemEntropy);
    const key = deriveInstallKey(secret, plan.salt, request);
    expect(credentialLookup(key, 'ik')).toBe(plan.keyHash);
    expect(hashCredential(key)).toBe(plan.keyHash);
    expect(recoverInstallKey(secret, plan.salt, request, plan.keyHash)).toBe(key);
  });

  it('needs the poll secret, the salt and the request: any other gives no key', () => {
    const plan = planInstallKey(secret, request, systemEntropy);
    const other = planInstallKey(secret, request, systemEntropy);
    expect(other.salt).not.toBe(plan.salt);
    expect(other.keyHash).not.toBe(plan.keyHash);
    const wrongSecret = `ps_${randomBytes(32).toString('base64url')}`;
    expect(recoverInstallKey(wrongSecret, plan.salt, request, plan.keyHash)).toBeNull();
    expect(recoverInstallKey(secret, other.salt, request, plan.keyHash)).toBeNull();
    expect(recoverInstallKey(secret, plan.salt, `${request}x`, plan.keyHash)).toBeNull();
  });
});
