/**
 * The service calls a tenant's extra tool itself (decisions row 89):
 * over MCP, to the connection's endpoint through the egress guard, with the
 * connection's credential (its bearer secret, or its OAuth client, which refreshes a
 * refused token), within the call's deadline span. The answer is what `invoke.completed`
 * records: the server's CallToolResult, or `ok: false` with why the call could not be made
 * (a server that is down, refuses, is not allowed by the egress guard, or answers an
 * error result). The server's own words reach the model only through its result.
 */
import { isServiceError } from '../errors.ts';
import { callTool } from '../mcp/call.ts';
import { accessOf, type CatalogCheckOptions } from '../sessions/catalog-check.ts';
import { Egress } from '../net/egress.ts';

/** Row 17: a completion's result is at most 1 MiB; a larger answer is refused as it streams. */
const MAX_RESULT_BYTES = 1024 * 1024;

export interface ToolCallOutcome {
  readonly ok: boolean;
  readonly result: unknown;
  readonly error: string | null;
}

export interface ToolCallRequest {
  readonly tenant: string;
  readonly connection: string;
  /** The tool's name on the server (not the model-visible `<connection>__<tool>`). */
  readonly tool: string;
  readonly args: unknown;
  readonly timeoutMs: number;
}

/** Calls extra tools over MCP for the turn runtime. */
export class ConnectionToolCaller {
  readonly #options: CatalogCheckOptions;

  constructor(options: CatalogCheckOptions) {
    this.#options = options;
  }

  /** Calls the tool; never throws for what the server or the network did. */
  async call(request: ToolCallRequest): Promise<ToolCallOutcome> {
    const stored = await this.#options.controlStore.get(
      'connection',
      request.tenant,
      request.connection,
    );
    if (stored === null) return failed(`connection ${request.connection} is gone`);
    const connection = stored.value;
    if (connection.state === 'authorizing') {
      return failed(`connection ${request.connection} is waiting for authorization`);
    }
    const access = await accessOf(this.#options, request.tenant, connection);
    if ('missing' in access) return failed(access.missing);
    try {
      const result = await callTool({
        endpoint: connection.endpoint,
        name: request.tool,
        args: (request.args ?? {}) as Record<string, unknown>,
        timeoutMs: request.timeoutMs,
        egress: this.#options.egress ?? new Egress(),
        maxResponseBytes: MAX_RESULT_BYTES,
        ...access.access,
      });
      const ok = result.isError !== true;
      return { ok, result, error: ok ? null : 'the tool answered an error result' };
    } catch (error) {
      // Service errors say what failed without the server's text.
      if (isServiceError(error)) return failed(`${error.code}: ${error.message}`);
      return failed('the call failed');
    }
  }
}

const failed = (error: string): ToolCallOutcome => ({ ok: false, result: null, error });
