/**
 * The catalog of a linked MCP server (interface §2.12, decisions row 42) and its digest.
 *
 * The digest is what session start compares against the kept catalog to refuse a server
 * whose tools changed under an install (row 47, the "rug pull"), and what decides an
 * "unchanged" PUT (row 46). It therefore covers exactly the tool surface a policy compiles
 * against and a model sees: each tool's name, description, input and output schema.
 *
 * `serverInfo` and `protocolVersion` are kept beside the tools (the notes' §5 catalog) but
 * stay out of the digest: a server that bumps its version string or negotiates a newer
 * protocol revision without touching a tool has not changed what an install consented to.
 * Titles, annotations, icons and `_meta` are display hints and stay out as well.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Catalog, CatalogTool } from '../schemas/connections.ts';

/** Who answered the discovery, as the server introduced itself on `initialize`. */
export interface CatalogServer {
  readonly name: string;
  readonly version: string;
}

/** A catalog as live discovery captures it (§2.12: never supplied), with who answered. */
export interface DiscoveredCatalog extends Catalog {
  /** The server's `initialize` self-introduction; outside the digest (module comment). */
  readonly serverInfo: CatalogServer;
  /** The protocol revision negotiated on `initialize`; outside the digest. */
  readonly protocolVersion: string;
}

/** The catalog's own form of one SDK tool: the four kept fields and nothing else. */
export function catalogTool(tool: Tool): CatalogTool {
  const kept: CatalogTool = {
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema,
  };
  return tool.outputSchema === undefined ? kept : { ...kept, outputSchema: tool.outputSchema };
}

/**
 * Sorts tools by name (code unit order, the order RFC 8785 uses for keys) and refuses a
 * list that names one tool twice: a name is how policies and models address a tool, so a
 * duplicate leaves the catalog ambiguous. Answers the reason, or the sorted tools.
 */
export function sortTools(
  tools: readonly CatalogTool[],
): { readonly tools: CatalogTool[] } | { readonly reason: string } {
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 1; i < sorted.length; i += 1) {
    const name = sorted[i]?.name;
    if (name === sorted[i - 1]?.name)
      return { reason: `tool ${JSON.stringify(name)} is listed twice` };
  }
  return { tools: sorted };
}

/**
 * The digest of sorted tools: hex SHA-256 of their RFC 8785 form. Throws when the tools cannot be put in canonical form
 * (a lone surrogate, a non-finite number), which the caller reports as unreadable.
 */
export function catalogDigest(tools: readonly CatalogTool[]): string {
  const canonical = canonicalize(tools);
  if (canonical === undefined) throw new Error('the tools have no canonical JSON form');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
