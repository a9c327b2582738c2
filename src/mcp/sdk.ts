/**
 * The MCP SDK's runtime parts the service uses, loaded by its first MCP exchange: the SDK
 * and what it brings (ajv among them) are some 10 MB of RSS that a service whose tenants
 * link no MCP server never needs. Types are imported where they are used, as types only.
 */
import type { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

export interface McpSdk {
  readonly Client: typeof Client;
  readonly StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  readonly StreamableHTTPError: typeof StreamableHTTPError;
  readonly auth: typeof auth;
  readonly UnauthorizedError: typeof UnauthorizedError;
  readonly OAuthError: typeof OAuthError;
  readonly McpError: typeof McpError;
  readonly ErrorCode: typeof ErrorCode;
  readonly CallToolResultSchema: typeof CallToolResultSchema;
}

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

/** The SDK, loaded once; a failed load is tried again by the next caller. */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/auth.js'),
    import('@modelcontextprotocol/sdk/server/auth/errors.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(
    ([client, http, authorization, errors, types]) => {
      loaded = {
        Client: client.Client,
        StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
        StreamableHTTPError: http.StreamableHTTPError,
        auth: authorization.auth,
        UnauthorizedError: authorization.UnauthorizedError,
        OAuthError: errors.OAuthError,
        McpError: types.McpError,
        ErrorCode: types.ErrorCode,
        CallToolResultSchema: types.CallToolResultSchema,
      };
      return loaded;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/**
 * The SDK when it is loaded, else undefined: an error can be one of the SDK's only once
 * the SDK is loaded, so a failure's classification (`failures.ts`) needs no load.
 */
export function loadedMcpSdk(): McpSdk | undefined {
  return loaded;
}
