/**
 * An owner's side of a proposal (interface 4.3 and 4.4), what the consent page does: sign
 * in (`POST /console/token`), read the proposal, consent with a tenant config, or decline.
 * Each call takes the credential it sends; `Client` offers them with the console token it
 * holds.
 */
import { bearer, bodyOf, type Api } from './core.ts';
import type { components } from './openapi.ts';

type Schemas = components['schemas'];
/** What `POST /console/token` takes: an ID token, or a user with the operator token. */
export type ConsoleTokenBody = Schemas['ConsoleTokenBody'];
export type ConsoleToken = Schemas['ConsoleTokenAnswer'];
/** A proposal as its tenant's members read it. */
export type ConsentRead = Schemas['ConsentRead'];
/** What an owner consents with: the inference option, extra tools and policies. */
export type TenantConfig = Schemas['TenantConfig'];
export type ConsentAnswer = Schemas['ConsentAnswer'];
export type DeclineAnswer = Schemas['DeclineAnswer'];

/**
 * A console token: for `{ subject_token, tenant }` (an ID token of the console's identity
 * provider) with no credential, or for `{ user, tenant }` with the operator token.
 */
export function signIn(
  api: Api,
  body: ConsoleTokenBody,
  operatorToken?: string,
): Promise<ConsoleToken> {
  const headers = operatorToken === undefined ? {} : bearer(operatorToken);
  return bodyOf(api.POST('/console/token', { body, headers }));
}

/** `GET /consent/{request}` (a member): the proposal and its state. */
export async function readProposal(api: Api, token: string, request: string): Promise<ConsentRead> {
  const read = await bodyOf(
    api.GET('/consent/{request}', {
      params: { path: { request } },
      // JSON, not the page the same address serves to browsers.
      headers: { ...bearer(token), accept: 'application/json' },
    }),
  );
  if (typeof read === 'string') throw new Error('the service answered the page, not JSON');
  return read;
}

/** `POST /consent/{request}` (an owner): consents with `config`; answers the install. */
export function consent(
  api: Api,
  token: string,
  request: string,
  config: TenantConfig,
): Promise<ConsentAnswer> {
  return bodyOf(
    api.POST('/consent/{request}', {
      params: { path: { request } },
      body: config,
      headers: bearer(token),
    }),
  );
}

/** `POST /consent/{request}/decline` (an owner): nothing is installed. */
export function decline(api: Api, token: string, request: string): Promise<DeclineAnswer> {
  return bodyOf(
    api.POST('/consent/{request}/decline', {
      params: { path: { request } },
      headers: bearer(token),
    }),
  );
}
