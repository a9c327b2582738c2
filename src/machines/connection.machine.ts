/**
 * The connection machine: interface table 3.3 with decisions rows 41 to 46 and 78, and the
 * transitions of the notes' §5 (`none → probing → linked | authorizing`, the callback's
 * exchange, a refused token back to `authorizing`).
 *
 * A connection rests in `none`, `linked` or `authorizing` (the two wire values of 2.12 and
 * "no such connection"). Every conversation with the server passes through `probing`,
 * whose effects are the two actors declared here by name and provided at the edge:
 * `catalogReader` (live discovery with a bearer, the stored OAuth tokens or a fresh
 * authorization) and `authorizer` (the callback's code exchange, then discovery). Both
 * answer a `LinkResult`. A failed probe returns to the state it started from with the
 * context as it was, only `failure` set: §7 "nothing changed".
 *
 * Purity. No storage, HTTP, clock or randomness: the edge restores the machine from the
 * stored connection (`resolveState`), sends one event, waits until it rests and stores
 * the context again. Events that arrive while probing are ignored (the edge never sends
 * one: it waits for the probe).
 */
import { assign, fromPromise, setup } from 'xstate';
import {
  initialConnectionContext,
  outcomeOf,
  type AuthorizerInput,
  type CatalogReaderInput,
  type ConnectionContext,
  type ConnectionEvent,
  type LinkResult,
  type ProbePurpose,
  type RestingState,
} from './connection.types.ts';

export * from './connection.types.ts';

const provided = (name: string) => () =>
  Promise.reject(new Error(`the ${name} effect is provided at the edge`));

const connection = setup({
  types: {
    context: {} as ConnectionContext,
    events: {} as ConnectionEvent,
  },
  actors: {
    /** Discovers the catalog, or captures the URL a server that demands OAuth needs. */
    catalogReader: fromPromise<LinkResult, CatalogReaderInput>(provided('catalogReader')),
    /** Exchanges the callback's code (PKCE), then discovers the catalog. */
    authorizer: fromPromise<LinkResult, AuthorizerInput>(provided('authorizer')),
  },
  actions: {
    /** Remembers where the probe starts and the config it links with. */
    startProbe: assign(
      ({ context, event }, params: { from: RestingState; purpose: ProbePurpose }) => {
        const config = event.type === 'link.requested' ? event.config : context.config;
        if (config === null) throw new Error('a probe needs a config');
        return { probe: { ...params, config }, outcome: null, failure: null };
      },
    ),
    /** 3.3 rows 1 and 4: linked with the live catalog; an unchanged PUT keeps what was stored. */
    applyLinked: assign(({ context }, params: { result: LinkResult }) => {
      const outcome = outcomeOf(context, params.result);
      if (params.result.status !== 'linked') throw new Error('applyLinked needs a linked result');
      if (outcome === 'unchanged') return { outcome, probe: null };
      return {
        config: context.probe?.config ?? context.config,
        auth: params.result.auth,
        catalog: params.result.catalog,
        authorize: null,
        outcome,
        probe: null,
      };
    }),
    /** 3.3 row 2: the server demands authorization; a PUT replaces the catalog with none yet. */
    applyAuthorizing: assign(({ context }, params: { result: LinkResult }) => {
      if (params.result.status !== 'authorizing') {
        throw new Error('applyAuthorizing needs an authorizing result');
      }
      const replacing = context.probe?.purpose === 'link';
      return {
        config: context.probe?.config ?? context.config,
        auth: params.result.auth,
        catalog: replacing ? null : context.catalog,
        authorize: params.result.authorize,
        outcome: outcomeOf(context, params.result),
        probe: null,
      };
    }),
    /** §7: the server could not be reached, registered with or read; nothing changed. */
    noteFailure: assign((_, params: { error: unknown }) => ({
      failure: params.error ?? new Error('the probe failed'),
      probe: null,
    })),
    /** Row 43: the fresh URL of a connection that stays linked. */
    noteAuthorizeUrl: assign((_, params: { result: LinkResult }) => ({
      authorize: params.result.status === 'authorizing' ? params.result.authorize : null,
      outcome: null,
      probe: null,
    })),
    /** 3.3 row 5, row 43: needs authorization again, at the freshly minted URL. */
    noteRefusal: assign(({ event }) =>
      event.type === 'token.refused' ? { authorize: event.authorize, outcome: null } : {},
    ),
    /** Row 78: the connection is gone. */
    forget: assign(() => initialConnectionContext),
  },
  guards: {
    isLinked: (_, params: { result: LinkResult }) => params.result.status === 'linked',
    cameFrom: ({ context }, params: { state: RestingState }) =>
      context.probe?.from === params.state,
    /** Only a connection that links through OAuth has a URL to authorize at (row 41). */
    usesOAuth: ({ context }) => context.auth?.kind === 'oauth',
    /** Row 43: a fresh URL was asked for while linked. */
    isRenewal: ({ context }) =>
      context.probe?.from === 'linked' && context.probe.purpose === 'fresh',
  },
});

interface ResultEvent {
  readonly output: LinkResult;
}
interface FailureEvent {
  readonly error: unknown;
}

const result = ({ event }: { event: ResultEvent }) => ({ result: event.output });
const failure = ({ event }: { event: FailureEvent }) => ({ error: event.error });
const FAILED = '§7: unreachable, registration refused or unreadable; nothing changed';

/** Where a finished probe goes: linked, or authorizing with the URL the owner opens. */
const linkedDone = {
  guard: { type: 'isLinked', params: result },
  target: '#connection.linked',
  actions: { type: 'applyLinked', params: result },
  description: 'the server answered its catalog (every page)',
} as const;
const authorizingDone = {
  target: '#connection.authorizing',
  actions: { type: 'applyAuthorizing', params: result },
  description: 'the server demands authorization: the answer carries `authorize`',
} as const;
/** Row 43 on a linked connection: its tokens keep working until the callback replaces them. */
const renewalDone = {
  guard: 'isRenewal',
  target: '#connection.linked',
  actions: { type: 'noteAuthorizeUrl', params: result },
  description: 'a fresh URL for a linked connection: it stays linked meanwhile',
} as const;

/** A failed probe goes back where it started, the connection as it was. */
const backTo = <S extends RestingState>(state: S) =>
  ({
    target: `#connection.${state}`,
    actions: { type: 'noteFailure', params: failure },
    description: FAILED,
  }) as const;
const backIfFrom = <S extends RestingState>(state: S) =>
  ({ ...backTo(state), guard: { type: 'cameFrom', params: { state } } }) as const;

const probe = (from: RestingState, purpose: ProbePurpose) =>
  ({ type: 'startProbe', params: { from, purpose } }) as const;

const LINK = '3.3 rows 1, 2 and 4: PUT discovers the catalog live';
const CALLBACK = 'row 45: the callback exchanges the code, then discovers';
const FRESH = 'row 43: POST …/authorize mints a fresh URL';
const DENIED = 'RFC 6749 §4.1.2.1: authorization refused; nothing changes';
const UNLINK = 'row 78: DELETE once no install references it';

/** The connection machine of interface table 3.3; see the file header. */
export const connectionMachine = connection.createMachine({
  id: 'connection',
  initial: 'none',
  context: initialConnectionContext,
  meta: {
    title: 'Connection',
    source: 'interface 3.3; decisions rows 41–46, 78; notes §5',
    invariants: [
      'A connection is `linked` only with a catalog discovered live from its server, every page of `tools/list` (2.12, row 42).',
      'A failed probe (unreachable, registration refused, unreadable) returns to the state it started from with the connection unchanged (§7).',
      'A PUT answers `created` from `none`; `unchanged` only when it stays `linked` with the same config, auth kind and catalog digest; `replaced` otherwise, so never `unchanged` while authorizing (2.16, row 46).',
      'While `authorizing` the connection holds the URL the owner opens (3.3 row 2, row 43).',
      'A refused token that cannot be refreshed moves a `linked` OAuth connection to `authorizing`, its catalog kept (3.3 row 5, row 43).',
      'Only a connection that links through OAuth mints authorization URLs (row 41).',
      'A fresh URL minted for a `linked` connection leaves it `linked` on its tokens until the callback replaces them (row 43).',
    ],
  },
  states: {
    none: {
      description: 'No connection by this name.',
      on: {
        'link.requested': {
          target: 'probing.discovering',
          actions: probe('none', 'link'),
          description: LINK,
        },
      },
    },
    probing: {
      description: 'Talking to the server; every other request waits for the answer.',
      initial: 'discovering',
      states: {
        discovering: {
          description: 'Discovering the catalog, or starting an authorization.',
          invoke: {
            id: 'catalogReader',
            src: 'catalogReader',
            input: ({ context }) => ({
              purpose: context.probe?.purpose === 'fresh' ? 'fresh' : 'link',
              config: context.probe?.config ?? context.config ?? initialConfigMissing(),
            }),
            onDone: [linkedDone, renewalDone, authorizingDone],
            // Only a PUT probes from none.
            onError: [backIfFrom('linked'), backIfFrom('authorizing'), backTo('none')],
          },
        },
        exchanging: {
          description: 'Exchanging the authorization code, then discovering the catalog.',
          invoke: {
            id: 'authorizer',
            src: 'authorizer',
            input: ({ context, event }) => ({
              config: context.probe?.config ?? context.config ?? initialConfigMissing(),
              code: event.type === 'callback.received' ? event.code : '',
              state: event.type === 'callback.received' ? event.state : '',
            }),
            onDone: [linkedDone, authorizingDone],
            // A callback is only taken while linked or authorizing.
            onError: [backIfFrom('linked'), backTo('authorizing')],
          },
        },
      },
    },
    linked: {
      description: 'Linked: the catalog captured at link time is kept.',
      on: {
        'link.requested': {
          target: 'probing.discovering',
          actions: probe('linked', 'link'),
          description: LINK,
        },
        'authorize.requested': {
          guard: 'usesOAuth',
          target: 'probing.discovering',
          actions: probe('linked', 'fresh'),
          description: FRESH,
        },
        'callback.received': {
          target: 'probing.exchanging',
          actions: probe('linked', 'callback'),
          description: `${CALLBACK} (a URL minted while linked)`,
        },
        'callback.refused': { description: DENIED },
        'token.refused': {
          guard: 'usesOAuth',
          target: 'authorizing',
          actions: 'noteRefusal',
          description: '3.3 row 5: refused and not refreshable; reads as needing authorization',
        },
        'unlink.requested': { target: 'none', actions: 'forget', description: UNLINK },
      },
    },
    authorizing: {
      description: 'Waiting for the owner to authorize at the `authorize` URL.',
      on: {
        'link.requested': {
          target: 'probing.discovering',
          actions: probe('authorizing', 'link'),
          description: LINK,
        },
        'authorize.requested': {
          target: 'probing.discovering',
          actions: probe('authorizing', 'fresh'),
          description: FRESH,
        },
        'callback.received': {
          target: 'probing.exchanging',
          actions: probe('authorizing', 'callback'),
          description: CALLBACK,
        },
        'callback.refused': { description: DENIED },
        'token.refused': {
          actions: 'noteRefusal',
          description: 'a newer URL replaces the old one',
        },
        'unlink.requested': { target: 'none', actions: 'forget', description: UNLINK },
      },
    },
  },
});

/** A probe always starts with a config (`startProbe` refuses otherwise). */
function initialConfigMissing(): never {
  throw new Error('a probe needs a config');
}
