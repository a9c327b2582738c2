/**
 * An MCP server that pages `tools/list`, built on the SDK's low-level `Server` (the
 * high-level `McpServer` never pages, notes §1) and served statelessly over Streamable
 * HTTP on loopback, in process.
 *
 * The test owns its tool list (`setTools`) to change the catalog between discoveries, and
 * can make it page forever (`loop`) to prove discovery gives up instead of hanging.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.ts';

/** How the server pages. */
export type PagingMode =
  /** Honest: pages of `pageSize`, then no cursor. */
  | 'pages'
  /** Answers the same cursor forever. */
  | 'loop'
  /** A new cursor every time, never the last page. */
  | 'endless';

/** A running paging server and its controls. */
export interface PagingServer {
  readonly endpoint: string;
  /** Every cursor `tools/list` was called with, `null` for the first page. */
  readonly cursors: (string | null)[];
  setTools(tools: readonly Tool[]): void;
  setMode(mode: PagingMode): void;
  setPageSize(size: number): void;
  /** Answers 401 to any request without `Authorization: Bearer <token>`; null lets all in. */
  requireBearer(token: string | null): void;
  close(): Promise<void>;
}

/** `count` simple tools named `tool-00`… with a one-field input schema. */
export function sampleTools(count: number, describe = (i: number) => `Tool number ${i}`): Tool[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `tool-${String(i).padStart(2, '0')}`,
    description: describe(i),
    inputSchema: {
      type: 'object' as const,
      properties: { value: { type: 'integer', minimum: i } },
      required: ['value'],
    },
  }));
}

/** Starts the server with `tools`, served `pageSize` to a page. */
export async function startPagingServer(
  tools: readonly Tool[],
  pageSize: number,
): Promise<PagingServer> {
  let current = [...tools];
  let mode: PagingMode = 'pages';
  let size = pageSize;
  const cursors: (string | null)[] = [];
  let bearer: string | null = null;

  const listTools = (cursor: string | undefined) => {
    cursors.push(cursor ?? null);
    const page = cursor === undefined ? 0 : Number.parseInt(cursor.replace(/^p/, ''), 10);
    if (!Number.isInteger(page) || page < 0) {
      throw new McpError(ErrorCode.InvalidParams, `unknown cursor ${cursor ?? ''}`);
    }
    const slice = current.slice(page * size, (page + 1) * size);
    if (mode === 'loop') return { tools: slice, nextCursor: 'p0' };
    if (mode === 'endless') return { tools: slice, nextCursor: `p${page + 1}` };
    const more = (page + 1) * size < current.length;
    return more ? { tools: slice, nextCursor: `p${page + 1}` } : { tools: slice };
  };

  // Stateless: one Server and transport per HTTP request, as the SDK's stateless example.
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    if (bearer !== null && req.headers.authorization !== `Bearer ${bearer}`) {
      res.writeHead(401).end();
      return;
    }
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- McpServer never pages (notes §1); paging is what Server is kept for
    const server = new Server(
      { name: 'paging-peer', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, (request) =>
      listTools(request.params?.cursor),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const loopback = await listenOnLoopback((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  return {
    endpoint: `${loopback.origin}/mcp`,
    cursors,
    setTools: (next) => {
      current = [...next];
    },
    setMode: (next) => {
      mode = next;
    },
    setPageSize: (next) => {
      size = next;
    },
    requireBearer: (token) => {
      bearer = token;
    },
    close: () => loopback.close(),
  };
}
