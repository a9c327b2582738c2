/**
 * An independent model of interface table 3.1 with decisions rows 9, 47, 60, 61, 83, 85
 * (the turn phases of part C are the turn machine's), written without XState: every (state, event) cell decides the
 * rule taken, the next state, the answer and the effects. `Record` without `Partial`.
 */
import type {
  ArchivedBy,
  SessionAnswer,
  SessionEvent,
} from '../../src/machines/session.machine.ts';

export type ModelStateName = 'none' | 'live' | 'archived';
type EventName = SessionEvent['type'];

export interface ModelState {
  readonly state: ModelStateName;
  readonly archivedBy: ArchivedBy | null;
}

/** An effect as the machine's recording implementation reports it. */
export type Effect = readonly [name: string, params: unknown];

export interface Outcome {
  readonly rule: string;
  readonly next: ModelState;
  readonly answer: SessionAnswer;
  readonly effects: readonly Effect[];
}

type Cell<E extends EventName> = (m: ModelState, e: Extract<SessionEvent, { type: E }>) => Outcome;
type Row = { readonly [E in EventName]: Cell<E> };

export const initialModel: ModelState = { state: 'none', archivedBy: null };

const stay = (rule: string, m: ModelState, answer: SessionAnswer): Outcome => ({
  rule,
  next: m,
  answer,
  effects: [],
});

/** Row 60 and row 83: who may archive; the same in every state that has a session. */
function archive(
  prefix: string,
  m: ModelState,
  e: Extract<SessionEvent, { type: 'archive.requested' }>,
): Outcome {
  if (!e.authorized && e.by === 'console')
    return stay(`${prefix}.archive.forbidden`, m, { outcome: 'forbidden' });
  if (!e.authorized) return stay(`${prefix}.archive.not_found`, m, { outcome: 'not_found' });
  if (m.state === 'archived') {
    return stay('archived.archive.repeat', m, {
      outcome: 'archived',
      by: m.archivedBy ?? 'install',
    });
  }
  // Row 60: the turn in flight, if any, ends first; session.archived lands last.
  return {
    rule: 'live.archive.archived',
    next: { state: 'archived', archivedBy: e.by },
    answer: { outcome: 'archived', by: e.by },
    effects: [
      ['cancelTurn', { by: e.by }],
      ['landArchived', { by: e.by }],
    ],
  };
}

/** 3.1 row 2 with rows 9 and 85, in the precedence of row 83. */
function offer(
  prefix: string,
  m: ModelState,
  e: Extract<SessionEvent, { type: 'records.offered' }>,
): Outcome {
  if (!e.attaches) return stay(`${prefix}.offer.not_attached`, m, { outcome: 'not_attached' });
  if (!e.accepted) return stay(`${prefix}.offer.filter_refused`, m, { outcome: 'filter_refused' });
  if (m.state === 'archived')
    return stay('archived.offer.archived', m, { outcome: 'session_archived' });
  if (e.key === 'different')
    return stay('live.offer.key_conflict', m, { outcome: 'idempotency_conflict' });
  if (e.key === 'same') return stay('live.offer.replayed', m, { outcome: 'replayed' });
  return stay('live.offer.accepted', m, { outcome: 'accepted' });
}

const live: Row = {
  'session.requested': (m) => stay('live.open.exists', m, { outcome: 'exists' }),
  'records.offered': (m, e) => offer('live', m, e),
  'archive.requested': (m, e) => archive('live', m, e),
};

export const table: Record<ModelStateName, Row> = {
  none: {
    'session.requested': (m, e) => {
      if (!e.principal) return stay('none.open.no_principal', m, { outcome: 'no_principal' });
      if (!e.valid) return stay('none.open.invalid_body', m, { outcome: 'invalid_body' });
      if (e.catalogs === 'changed')
        return stay('none.open.catalog_changed', m, { outcome: 'catalog_changed' });
      if (e.catalogs === 'unreadable') {
        return stay('none.open.catalog_unreadable', m, { outcome: 'catalog_unreadable' });
      }
      return {
        rule: 'none.open.opened',
        next: { ...m, state: 'live' },
        answer: { outcome: 'opened' },
        effects: [['landOpened', { install: e.install }]],
      };
    },
    'records.offered': (m, e) =>
      e.attaches
        ? stay('none.offer.not_found', m, { outcome: 'not_found' })
        : stay('none.offer.not_attached', m, { outcome: 'not_attached' }),
    'archive.requested': (m) => stay('none.archive.not_found', m, { outcome: 'not_found' }),
  },
  live,
  archived: {
    'session.requested': (m) => stay('archived.open.exists', m, { outcome: 'exists' }),
    'records.offered': (m, e) => offer('archived', m, e),
    'archive.requested': (m, e) => archive('archived', m, e),
  },
};

/** Applies one event. */
export function step(m: ModelState, e: SessionEvent): Outcome {
  const row = table[m.state];
  switch (e.type) {
    case 'session.requested':
      return row[e.type](m, e);
    case 'records.offered':
      return row[e.type](m, e);
    case 'archive.requested':
      return row[e.type](m, e);
  }
}

/** Every rule the model documents; the test asserts each is taken. */
export const RULES: readonly string[] = [
  ...['no_principal', 'invalid_body', 'catalog_changed', 'catalog_unreadable', 'opened'].map(
    (r) => `none.open.${r}`,
  ),
  'none.offer.not_found',
  'none.offer.not_attached',
  'none.archive.not_found',
  'live.open.exists',
  ...['not_attached', 'filter_refused', 'key_conflict', 'replayed', 'accepted'].map(
    (r) => `live.offer.${r}`,
  ),
  'live.archive.forbidden',
  'live.archive.not_found',
  'live.archive.archived',
  'archived.open.exists',
  ...['not_attached', 'filter_refused', 'archived'].map((r) => `archived.offer.${r}`),
  'archived.archive.forbidden',
  'archived.archive.not_found',
  'archived.archive.repeat',
];
