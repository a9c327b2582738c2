/**
 * The documents of the vendor flow: the vendor config hash (2.5, decisions row 21) and the
 * composed document an install runs under (2.7, row 28).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { IndexValues, Versioned } from '../storage/control-store.ts';
import { INDEX, scoped, type InstallValue } from '../resources/types.ts';
import type { ComposedDocument, InstallInfo, VendorDocument } from '../schemas/vendor.ts';

/**
 * Row 21: SHA-256 (lowercase hex) of the RFC 8785 (JCS) form of the vendor document,
 * `appdoc` included. It hashes the document as checked, with the defaults of 2.5 applied
 * (`result_limit` and `timeout` null when absent), which is exactly the `vendor` member a
 * composed document serves, so anyone can recompute it from `GET /appdoc`.
 */
export function vendorHash(vendor: VendorDocument): string {
  const canonical = canonicalize(vendor);
  // A parsed document is plain JSON; JCS refuses only non-finite numbers and lone surrogates.
  if (canonical === undefined) throw new TypeError('the vendor document has no canonical form');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** Row 28: the install member of a composed document. */
export function installInfo(install: Versioned<InstallValue>): InstallInfo {
  return {
    id: install.id,
    tenant: install.value.tenant,
    vendor: install.value.vendorHash,
    created: install.created,
    updated: install.updated,
  };
}

/** 2.7: the vendor document and the tenant config an install runs under. */
export function composedDocument(install: Versioned<InstallValue>): ComposedDocument {
  return {
    install: installInfo(install),
    tenant: install.value.config,
    vendor: install.value.vendor,
  };
}

/**
 * The index entries of an install (see `InstallValue`): its key while it has one (a
 * tombstone keeps it, so the old key reads as gone, row 76), and while it is live the
 * inference option and connections it names, which make their deletes answer 409 (2.18).
 */
export function installIndex(value: InstallValue): IndexValues {
  const connections = [...new Set(value.config.extra_tools.map((tool) => tool.connection))];
  return {
    [INDEX.key]: value.keyHash === null ? [] : [value.keyHash],
    [INDEX.inference]: value.deleted ? [] : [scoped(value.tenant, value.config.inference)],
    [INDEX.connection]: value.deleted ? [] : connections.map((name) => scoped(value.tenant, name)),
  };
}
