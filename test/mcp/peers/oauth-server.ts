/**
 * An OAuth-protected MCP server on loopback, in process (notes §2.4): the SDK's own
 * `mcpAuthRouter` (RFC 8414 and RFC 9728 metadata, RFC 7591 registration, authorize,
 * token, revoke) over `TestAuthority`, and `requireBearerAuth` in front of an `McpServer`
 * with three tools. The authorization server and the resource share one origin
 * (`http://127.0.0.1:<port>`), which the SDK allows without https because it is loopback.
 */
import express from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { listenOnLoopback } from './loopback.ts';
import { TestAuthority } from './oauth-authority.ts';

/** A running OAuth peer. */
export interface OAuthServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly endpoint: string;
  /** The authorization server's issuer, the same origin. */
  readonly issuer: string;
  readonly authority: TestAuthority;
  close(): Promise<void>;
}

/** The tools behind the bearer check; `whoami` tells which client's token was used. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'oauth-peer', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echoes the message', inputSchema: { message: z.string() } },
    ({ message }) => ({ content: [{ type: 'text', text: message }] }),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool('whoami', { description: 'Names the client of the token' }, (extra) => ({
    content: [{ type: 'text', text: extra.authInfo?.clientId ?? 'nobody' }],
  }));
  return server;
}

/** Starts the peer. */
export async function startOAuthServer(): Promise<OAuthServer> {
  const loopback = await listenOnLoopback();
  const authority = new TestAuthority();
  const endpoint = new URL('/mcp', loopback.origin);
  const app = express();
  app.use(
    mcpAuthRouter({
      provider: authority,
      issuerUrl: new URL(loopback.origin),
      resourceServerUrl: endpoint,
      scopesSupported: ['mcp:tools'],
      // A test run makes a handful of requests; the default limits only add noise.
      authorizationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  const bearer = requireBearerAuth({
    verifier: authority,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(endpoint),
  });
  // Stateless: one McpServer and transport per request; GET (a standalone SSE stream) is 405.
  app.post('/mcp', bearer, express.json(), (req, res, next) => {
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res, req.body))
      .catch(next);
  });
  app.all('/mcp', (_req, res) => {
    res.status(405).set('allow', 'POST').end();
  });
  loopback.server.on('request', app);
  return {
    endpoint: endpoint.href,
    issuer: loopback.origin,
    authority,
    close: () => loopback.close(),
  };
}
