/**
 * Connections, the MCP servers a tenant links (2.12, 3.3, 4.3), with the auth,
 * catalog and body decisions of rows 41 to 46.
 */
import { z } from 'zod';
import {
  ConnectionName,
  Millis,
  ResourceName,
  Sha256Hex,
  WriteOutcome,
  orMissing,
} from './common.ts';
import { ResultLimit, ToolTimeout } from './vendor.ts';

/** Decisions row 41: how the service authenticates to the server; no token is shown. */
export const ConnectionAuth = z
  .object({
    kind: z.enum(['none', 'bearer', 'oauth']),
    credential: ResourceName.optional().describe('The secret sent as a bearer (kind bearer).'),
    issuer: z.url().optional().describe('The authorization server (kind oauth).'),
    scopes: z.array(z.string()).optional().describe('Scopes granted (kind oauth).'),
  })
  .meta({
    id: 'ConnectionAuth',
    description:
      'How the service authenticates to a connection: `none`, a tenant secret sent as a bearer, or OAuth. No token is ever shown.',
  });
export type ConnectionAuth = z.infer<typeof ConnectionAuth>;

/** Decisions row 42: one tool as MCP `tools/list` describes it. */
export const CatalogTool = z
  .object({
    name: z.string(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'CatalogTool', description: 'A tool of a connection as MCP lists it.' });
export type CatalogTool = z.infer<typeof CatalogTool>;

/** Decisions rows 42 and 46: the tools captured at link time and their digest. */
export const Catalog = z
  .object({
    tools: z.array(CatalogTool),
    digest: Sha256Hex.describe(
      'Digest of the tool list; opening a session compares it with the live catalog and answers 409 `catalog_changed` when they differ.',
    ),
    captured: Millis.describe('When the catalog was discovered, Unix ms.'),
  })
  .meta({
    id: 'Catalog',
    description: "A connection's tools, as its MCP server listed them when it was linked.",
  });
export type Catalog = z.infer<typeof Catalog>;

/** 3.3, decisions row 43: linked, or waiting for the owner to authorize. */
export const ConnectionState = z.enum(['linked', 'authorizing']);
export type ConnectionState = z.infer<typeof ConnectionState>;

/** 2.12: a linked MCP server. */
export const Connection = z
  .object({
    name: ConnectionName,
    endpoint: z.url(),
    auth: ConnectionAuth,
    catalog: Catalog.nullable().describe('Captured when last linked; null until the first link.'),
    result_limit: ResultLimit,
    state: ConnectionState,
    timeout: ToolTimeout,
  })
  .meta({ id: 'Connection', description: 'A linked MCP server.' });
export type Connection = z.infer<typeof Connection>;

/** Decisions row 79: `GET /connections`, the tenant's connections by name. */
export const ConnectionList = z
  .array(Connection)
  .meta({ id: 'ConnectionList', description: "The tenant's connections." });
export type ConnectionList = z.infer<typeof ConnectionList>;

/**
 * 4.3, decisions row 44: `PUT /connections/{id}` body. The catalog is discovered, never
 * sent; `name` must equal the path id, which the route checks.
 */
export const PutConnectionBody = z
  .object({
    name: ConnectionName,
    endpoint: z.url({ protocol: /^https?$/, error: orMissing('must be an http or https URL') }),
    credential: ResourceName.nullable()
      .default(null)
      .describe(
        'A secret the tenant holds, sent as a bearer; null lets the server ask for authorization.',
      ),
    result_limit: ResultLimit.default(null),
    return_to: z
      .url({ error: 'must be a URL' })
      .optional()
      .describe('Where the browser goes after authorization; its origin must be allowlisted.'),
    timeout: ToolTimeout.default(null),
  })
  .meta({ id: 'PutConnectionBody', description: 'What a tenant owner links.' });
export type PutConnectionBody = z.infer<typeof PutConnectionBody>;

/** 4.3: the connection as linked, the outcome and, when needed, the URL to authorize at. */
export const PutConnectionAnswer = z
  .object({
    connection: Connection,
    outcome: WriteOutcome,
    authorize: z.url().optional().describe('Present when the server demands authorization.'),
  })
  .meta({ id: 'PutConnectionAnswer', description: 'The answer to a connection put.' });
export type PutConnectionAnswer = z.infer<typeof PutConnectionAnswer>;

/** Decisions row 43: `POST /connections/{id}/authorize`, a fresh URL. */
export const AuthorizeAnswer = z
  .object({ authorize: z.url() })
  .meta({ id: 'AuthorizeAnswer', description: 'Where the owner authorizes the connection.' });
export type AuthorizeAnswer = z.infer<typeof AuthorizeAnswer>;

/** Decisions row 45: the OAuth callback, `code` and `state` or `error` (RFC 6749 §4.1.2). */
export const CallbackQuery = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(4096).optional(),
});
export type CallbackQuery = z.infer<typeof CallbackQuery>;
