/**
 * An independent model of interface table 3.3 with decisions rows 41 to 46 and 78, written
 * without XState: every (state, event) cell is a function deciding the rule taken, the
 * effect the machine must start, the next model state and the write outcome. `Record`
 * without `Partial`, so no cell is left out; `probing` ignores every request.
 */
import type { WriteOutcome } from '../../src/schemas/common.ts';
import type { ConnectionConfig, RestingState } from '../../src/machines/connection.machine.ts';

export type ModelStateName = RestingState | 'probing';
export type ModelEventName =
  | 'link.requested'
  | 'authorize.requested'
  | 'callback.received'
  | 'callback.refused'
  | 'token.refused'
  | 'unlink.requested';
export type AuthKind = 'none' | 'bearer' | 'oauth';

export interface ModelState {
  readonly state: RestingState;
  readonly config: ConnectionConfig | null;
  readonly authKind: AuthKind | null;
  /** The kept catalog's digest. */
  readonly digest: string | null;
  readonly authorize: string | null;
}

/** What the server answers a probe, scripted by the test. */
export type ProbeAnswer =
  | { readonly kind: 'linked'; readonly authKind: AuthKind; readonly digest: string }
  | { readonly kind: 'authorizing'; readonly url: string }
  | { readonly kind: 'fails' };

export type ModelEvent =
  | {
      readonly type: 'link.requested';
      readonly config: ConnectionConfig;
      readonly answer: ProbeAnswer;
    }
  | { readonly type: 'authorize.requested'; readonly answer: ProbeAnswer }
  | { readonly type: 'callback.received'; readonly answer: ProbeAnswer }
  | { readonly type: 'callback.refused' }
  | { readonly type: 'token.refused'; readonly url: string }
  | { readonly type: 'unlink.requested' };

/** The effect a cell starts, with the config it must be given. */
export type Effect =
  | {
      readonly actor: 'catalogReader';
      readonly purpose: 'link' | 'fresh';
      readonly config: ConnectionConfig;
    }
  | { readonly actor: 'authorizer'; readonly config: ConnectionConfig };

export interface Expected {
  /** The documented rule the cell applied, for coverage. */
  readonly rule: string;
  readonly next: ModelState;
  readonly effect: Effect | null;
  readonly outcome: WriteOutcome | null;
  /** The probe failed: the connection is as it was (§7 "nothing changed"). */
  readonly failed: boolean;
}

type Cell = (m: ModelState, e: ModelEvent) => Expected;

export const initialModel: ModelState = {
  state: 'none',
  config: null,
  authKind: null,
  digest: null,
  authorize: null,
};

const stay = (rule: string, m: ModelState): Expected => ({
  rule,
  next: m,
  effect: null,
  outcome: null,
  failed: false,
});

function sameConfig(a: ConnectionConfig | null, b: ConnectionConfig): boolean {
  return a !== null && JSON.stringify(a) === JSON.stringify(b);
}

/** A probe from `m` for `purpose`, finished with `answer`. */
function probe(
  prefix: string,
  m: ModelState,
  purpose: 'link' | 'fresh' | 'callback',
  config: ConnectionConfig,
  answer: ProbeAnswer,
): Expected {
  const effect: Effect =
    purpose === 'callback'
      ? { actor: 'authorizer', config }
      : { actor: 'catalogReader', purpose, config };
  const rule = `${prefix}.${purpose}.${answer.kind}`;
  if (answer.kind === 'fails') return { rule, next: m, effect, outcome: null, failed: true };
  const isPut = purpose === 'link';
  if (answer.kind === 'authorizing' && m.state === 'linked' && purpose === 'fresh') {
    // Row 43: a linked connection keeps its tokens until the callback replaces them.
    return { rule, effect, failed: false, outcome: null, next: { ...m, authorize: answer.url } };
  }
  if (answer.kind === 'authorizing') {
    return {
      rule,
      effect,
      failed: false,
      // Row 46: created from none, otherwise replaced, never unchanged.
      outcome: isPut ? (m.state === 'none' ? 'created' : 'replaced') : null,
      next: {
        state: 'authorizing',
        config,
        authKind: 'oauth',
        // A PUT replaces the connection: no catalog until it links.
        digest: isPut ? null : m.digest,
        authorize: answer.url,
      },
    };
  }
  const unchanged =
    isPut &&
    m.state === 'linked' &&
    sameConfig(m.config, config) &&
    m.authKind === answer.authKind &&
    m.digest === answer.digest;
  if (unchanged)
    return { rule: `${rule}.unchanged`, next: m, effect, outcome: 'unchanged', failed: false };
  return {
    rule,
    effect,
    failed: false,
    outcome: isPut ? (m.state === 'none' ? 'created' : 'replaced') : null,
    next: {
      state: 'linked',
      config,
      authKind: answer.authKind,
      digest: answer.digest,
      authorize: null,
    },
  };
}

const answerOf = (e: ModelEvent): ProbeAnswer => ('answer' in e ? e.answer : { kind: 'fails' });
const configOf = (m: ModelState): ConnectionConfig => {
  if (m.config === null) throw new Error('a resting connection has a config');
  return m.config;
};

const link: Cell = (m, e) => {
  if (e.type !== 'link.requested') throw new Error('not a link');
  return probe(m.state, m, 'link', e.config, e.answer);
};

/** Table 3.3 with the decisions rows, one cell per (state, event). */
export const table: Record<ModelStateName, Record<ModelEventName, Cell>> = {
  none: {
    'link.requested': link,
    'authorize.requested': (m) => stay('none.authorize.ignored', m),
    'callback.received': (m) => stay('none.callback.ignored', m),
    'callback.refused': (m) => stay('none.refused.ignored', m),
    'token.refused': (m) => stay('none.token.ignored', m),
    'unlink.requested': (m) => stay('none.unlink.ignored', m),
  },
  probing: {
    'link.requested': (m) => stay('probing.link.ignored', m),
    'authorize.requested': (m) => stay('probing.authorize.ignored', m),
    'callback.received': (m) => stay('probing.callback.ignored', m),
    'callback.refused': (m) => stay('probing.refused.ignored', m),
    'token.refused': (m) => stay('probing.token.ignored', m),
    'unlink.requested': (m) => stay('probing.unlink.ignored', m),
  },
  linked: {
    'link.requested': link,
    'authorize.requested': (m, e) =>
      m.authKind === 'oauth'
        ? probe('linked', m, 'fresh', configOf(m), answerOf(e))
        : stay('linked.authorize.not_oauth', m),
    'callback.received': (m, e) => probe('linked', m, 'callback', configOf(m), answerOf(e)),
    'callback.refused': (m) => stay('linked.refused', m),
    'token.refused': (m, e) =>
      m.authKind === 'oauth' && e.type === 'token.refused'
        ? {
            ...stay('linked.token.refused', m),
            next: { ...m, state: 'authorizing', authorize: e.url },
          }
        : stay('linked.token.not_oauth', m),
    'unlink.requested': () => stay('linked.unlink', initialModel),
  },
  authorizing: {
    'link.requested': link,
    'authorize.requested': (m, e) => probe('authorizing', m, 'fresh', configOf(m), answerOf(e)),
    'callback.received': (m, e) => probe('authorizing', m, 'callback', configOf(m), answerOf(e)),
    'callback.refused': (m) => stay('authorizing.refused', m),
    'token.refused': (m, e) =>
      stay('authorizing.token.refused', {
        ...m,
        authorize: e.type === 'token.refused' ? e.url : m.authorize,
      }),
    'unlink.requested': () => stay('authorizing.unlink', initialModel),
  },
};

/** Every rule the model documents; the test asserts each is taken. */
export const RULES: readonly string[] = [
  ...(['none', 'linked', 'authorizing'] as const).flatMap((from) =>
    ['linked', 'authorizing', 'fails'].map((answer) => `${from}.link.${answer}`),
  ),
  'linked.link.linked.unchanged',
  ...(['linked', 'authorizing'] as const).flatMap((from) =>
    (['fresh', 'callback'] as const).flatMap((purpose) =>
      ['linked', 'authorizing', 'fails'].map((answer) => `${from}.${purpose}.${answer}`),
    ),
  ),
  'none.authorize.ignored',
  'none.callback.ignored',
  'none.refused.ignored',
  'none.token.ignored',
  'none.unlink.ignored',
  'probing.link.ignored',
  'probing.authorize.ignored',
  'probing.callback.ignored',
  'probing.refused.ignored',
  'probing.token.ignored',
  'probing.unlink.ignored',
  'linked.authorize.not_oauth',
  'linked.refused',
  'linked.token.refused',
  'linked.token.not_oauth',
  'linked.unlink',
  'authorizing.refused',
  'authorizing.token.refused',
  'authorizing.unlink',
];
