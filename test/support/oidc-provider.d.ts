/**
 * The part of oidc-provider (a certified OpenID Connect server, no type declarations of its
 * own) that `oidc-provider-peer.ts` uses.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    /** The provider as a Node request listener (it is a Koa application). */
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
