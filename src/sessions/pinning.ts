/**
 * The composed document a session runs under, pinned at open (interface 2.7 and 3.5):
 * "open sessions keep the config they landed at open; sessions opened afterward use the
 * updated consent". The document is composed from the install as it is at open, its
 * hash goes into `session.opened` (`config`, part B), and the document itself is kept
 * once per tenant under that hash (`session_config`), so a later `PUT /installs/{id}`
 * never reaches a session that is already open.
 *
 * The model-visible tools follow decisions row 27: vendor tools by their own name, extra
 * tools as `<connection>__<tool>`.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { composedDocument } from '../consent/documents.ts';
import type { InstallValue } from '../resources/types.ts';
import type { ComposedDocument } from '../schemas/vendor.ts';
import type { Versioned } from '../storage/control-store.ts';

/** One tool of a session as `session.opened` lists it (part B). */
export interface SessionTool {
  /** The name the model sees. */
  readonly name: string;
  /** `vendor` or `connection:<name>`. */
  readonly source: string;
}

/** A composed document and its hash. */
export interface PinnedConfig {
  readonly document: ComposedDocument;
  /** SHA-256 hex of the document's RFC 8785 form. */
  readonly hash: string;
}

/** Pins the install's composed document: the document and its hash. */
export function pinConfig(install: Versioned<InstallValue>): PinnedConfig {
  const document = composedDocument(install);
  const canonical = canonicalize(document);
  // A document that passed its schemas is plain JSON, so it always has a canonical form.
  if (canonical === undefined) throw new Error('the composed document has no canonical form');
  return { document, hash: createHash('sha256').update(canonical, 'utf8').digest('hex') };
}

/** Part B `tools`: the vendor's tools, then the tenant's extra tools (row 27 names). */
export function sessionTools(document: ComposedDocument): SessionTool[] {
  return [
    ...document.vendor.tools.map((tool) => ({ name: tool.name, source: 'vendor' })),
    ...document.tenant.extra_tools.map((tool) => ({
      name: `${tool.connection}__${tool.tool}`,
      source: `connection:${tool.connection}`,
    })),
  ];
}
