/**
 * The service calling one tool of a linked server (decisions row 89: the service runs MCP
 * extra tools as `service:mcp`, and lands the `CallToolResult` as the completion's result).
 *
 * The model must be able to correct itself (MCP spec, tools: "execution errors"), so a
 * call the server refuses as a call, an unknown tool or arguments that do not fit its
 * schema, comes back as an `isError` result. Servers differ here: the SDK's `McpServer`
 * answers such calls with an `isError` result itself, others answer a JSON-RPC error; both
 * read the same to the caller. Only a server that cannot be reached, read or authorized,
 * or that the egress guard refuses (`EndpointRefused`, code `upstream_refused`), is an
 * exception (`UpstreamFailure`): the caller completes the call `ok: false` with its code
 * and message, which say what failed and never carry the server's words.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadMcpSdk, type McpSdk } from './sdk.ts';
import type { McpAccess } from './session.ts';
import { withMcpSession } from './session.ts';

/** One call: the tool's name as the server knows it, and its arguments. */
export interface CallToolOptions extends McpAccess {
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** JSON-RPC errors a server sends about the call itself, not about the session. */
function callRefusals({ ErrorCode }: McpSdk): ReadonlySet<number> {
  return new Set([
    ErrorCode.InvalidParams,
    ErrorCode.MethodNotFound,
    ErrorCode.InvalidRequest,
    ErrorCode.InternalError,
  ]);
}

/**
 * Calls the tool and answers its result.
 *
 * @throws AuthorizationRequired when the server answers 401 and the credential cannot be
 *   refreshed; EndpointRefused when the egress guard refuses its address or a redirect;
 *   UpstreamFailure when it cannot be reached, times out or answers unreadably.
 */
export async function callTool(options: CallToolOptions): Promise<CallToolResult> {
  const sdk = await loadMcpSdk();
  const { CallToolResultSchema, McpError } = sdk;
  return withMcpSession(options, async ({ client, request }) => {
    try {
      const result = await client.callTool(
        { name: options.name, arguments: { ...options.args } },
        CallToolResultSchema,
        request,
      );
      return CallToolResultSchema.parse(result);
    } catch (error) {
      if (error instanceof McpError && callRefusals(sdk).has(error.code)) {
        return { content: [{ type: 'text', text: error.message }], isError: true };
      }
      throw error;
    }
  });
}
