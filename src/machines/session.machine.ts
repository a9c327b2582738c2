/**
 * The session machine: interface table 3.1 with decisions rows 35, 60, 61 and the
 * `live.phase` values of part C. Every cell of state × event is decided; each event emits
 * exactly one `session.answered`, which the edge maps to its HTTP answer.
 *
 * The session's life is `none → live → archived`. The turn phases of part C (`live.phase`)
 * are the turn machine's (`turn.machine.ts`), driven by the session's records; archiving
 * asks the turn runtime to end the turn in flight first (`cancelTurn`, row 60), then lands
 * `session.archived` last.
 *
 * Purity. No storage, HTTP, clock or randomness: the edge parses the request, verifies
 * the token, runs the write filter, checks the idempotency key and the catalogs, and
 * passes the outcomes in as event data (`now` included). The log store stamps cursors;
 * this machine only decides whether a batch may land. The effects `landOpened`,
 * `cancelTurn` and `landArchived` are no-ops here; the actor host provides the real ones.
 */
import { and, assign, emit, not, setup } from 'xstate';
import {
  initialSessionContext,
  type ArchiveEffect,
  type SessionAnswer,
  type SessionContext,
  type SessionEvent,
} from './session.types.ts';

export * from './session.types.ts';

/** Answers that carry nothing but their outcome. */
type FixedOutcome = Exclude<SessionAnswer['outcome'], 'archived'>;

interface Answered {
  type: 'session.answered';
  answer: SessionAnswer;
}

const answered = (answer: SessionAnswer): Answered => ({ type: 'session.answered', answer });

const session = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    emitted: {} as Answered,
  },
  actions: {
    /** Answers a fixed outcome. */
    answer: emit((_, params: { outcome: FixedOutcome }) => answered({ outcome: params.outcome })),
    /** Row 60: archived, by whoever archived it first. */
    answerArchived: emit(({ context }) =>
      answered({ outcome: 'archived', by: context.archivedBy ?? 'install' }),
    ),
    /** 3.1 row 1: the session belongs to the install that opened it. */
    open: assign(({ event }) =>
      event.type === 'session.requested' ? { install: event.install, opened: event.now } : {},
    ),
    /** Row 61: remembers who ended the session. */
    markArchived: assign(({ event }) =>
      event.type === 'archive.requested' ? { archivedBy: event.by } : {},
    ),
    /** Effect: `session.opened` lands at cursor 1 (row 13, part B). */
    landOpened: (_, _params: { install: string }) => undefined,
    /** Effect: row 60, the turn in flight, if any, ends first (`turn.ended archived`). */
    cancelTurn: (_, _params: ArchiveEffect) => undefined,
    /** Effect: row 60, `session.archived` lands last. */
    landArchived: (_, _params: ArchiveEffect) => undefined,
  },
  guards: {
    hasPrincipal: ({ event }) => event.type === 'session.requested' && event.principal,
    isValid: ({ event }) => event.type === 'session.requested' && event.valid,
    catalogsChanged: ({ event }) =>
      event.type === 'session.requested' && event.catalogs === 'changed',
    catalogsUnreadable: ({ event }) =>
      event.type === 'session.requested' && event.catalogs === 'unreadable',
    attaches: ({ event }) => event.type === 'records.offered' && event.attaches,
    isAccepted: ({ event }) => event.type === 'records.offered' && event.accepted,
    keyHoldsOther: ({ event }) => event.type === 'records.offered' && event.key === 'different',
    keyHoldsSame: ({ event }) => event.type === 'records.offered' && event.key === 'same',
    isAuthorized: ({ event }) => event.type === 'archive.requested' && event.authorized,
    byConsole: ({ event }) => event.type === 'archive.requested' && event.by === 'console',
  },
});

/** Answers a fixed outcome (the generated table shows it as `answer(<outcome>)`). */
const say = (outcome: FixedOutcome) => ({ type: 'answer', params: { outcome } }) as const;

const archiveEffect = ({ event }: { event: SessionEvent }): ArchiveEffect => ({
  by: event.type === 'archive.requested' ? event.by : 'install',
});

/** Row 60: an install that does not own the session sees none; a console non-owner is refused. */
const refuseArchive = [
  {
    guard: and([not('isAuthorized'), 'byConsole']),
    actions: say('forbidden'),
    description: 'row 60: a console caller must be an owner (403)',
  },
  {
    guard: not('isAuthorized'),
    actions: say('not_found'),
    description: 'row 60: only the owning install key archives (404)',
  },
] as const;

/** The session machine of interface table 3.1; see the file header. */
export const sessionMachine = session.createMachine({
  id: 'session',
  initial: 'none',
  context: initialSessionContext,
  meta: {
    title: 'Session',
    source: 'interface 3.1; decisions rows 35, 60, 61 and part C',
    invariants: [
      'Every event is answered by exactly one `session.answered` emission.',
      'Nothing lands on an archived session: once `archived`, every append answers `session_archived` (or an earlier refusal by precedence) and the state never changes again (3.1 row 3).',
      'Archiving is idempotent: a repeated archive answers `archived` with the first archiver, and its effects run once (row 60).',
      'Archiving ends the turn in flight, if any, before `session.archived` lands, which is last (row 60).',
      'Refusals follow the precedence of row 83: 400, then 403, then 404, then 409, then 502; a refusal changes nothing.',
      'An append lands only when the token attaches, the filter accepts and the key holds no different record; an identical resend replays (rows 9, 85).',
      "An archived session reads as phase `ended` (rows 35, 61); a live one reads the turn machine's phase.",
    ],
  },
  states: {
    none: {
      description: 'No session by this id.',
      on: {
        'session.requested': [
          { guard: not('hasPrincipal'), actions: say('no_principal'), description: '§7: 400' },
          { guard: not('isValid'), actions: say('invalid_body'), description: '§7, row 63: 400' },
          {
            guard: 'catalogsChanged',
            actions: say('catalog_changed'),
            description: 'row 47: 409',
          },
          {
            guard: 'catalogsUnreadable',
            actions: say('catalog_unreadable'),
            description: '§7: 502',
          },
          {
            target: 'live',
            actions: [
              'open',
              {
                type: 'landOpened',
                params: ({ event }) => ({ install: event.install }),
              },
              say('opened'),
            ],
            description: '3.1 row 1: principal given, body valid, catalogs unchanged and readable',
          },
        ],
        'records.offered': [
          { guard: not('attaches'), actions: say('not_attached'), description: 'row 7: 403' },
          { actions: say('not_found'), description: '§7: no such session (404)' },
        ],
        'archive.requested': { actions: say('not_found'), description: 'row 60: 404' },
      },
    },
    live: {
      description: 'Open: records land; turns run (the turn machine, part C).',
      on: {
        'session.requested': { actions: say('exists'), description: 'ids are minted per POST' },
        'records.offered': [
          { guard: not('attaches'), actions: say('not_attached'), description: '§7: 403' },
          { guard: not('isAccepted'), actions: say('filter_refused'), description: 'row 85: 403' },
          {
            guard: 'keyHoldsOther',
            actions: say('idempotency_conflict'),
            description: 'row 9: 409',
          },
          {
            guard: 'keyHoldsSame',
            actions: say('replayed'),
            description: 'row 9: the original envelopes answer; nothing lands',
          },
          { actions: say('accepted'), description: '3.1 row 2: the batch lands' },
        ],
        'archive.requested': [
          ...refuseArchive,
          {
            target: 'archived',
            actions: [
              'markArchived',
              { type: 'cancelTurn', params: archiveEffect },
              { type: 'landArchived', params: archiveEffect },
              'answerArchived',
            ],
            description:
              '3.1 row 3, row 60: the turn in flight ends first, session.archived lands last',
          },
        ],
      },
    },
    archived: {
      description: 'Ended (row 61): phase `ended`; nothing lands again.',
      on: {
        'session.requested': { actions: say('exists'), description: 'ids are minted per POST' },
        'records.offered': [
          { guard: not('attaches'), actions: say('not_attached'), description: '§7: 403' },
          { guard: not('isAccepted'), actions: say('filter_refused'), description: 'row 85: 403' },
          {
            actions: say('session_archived'),
            description: '3.1 row 3: nothing lands again (409)',
          },
        ],
        'archive.requested': [
          ...refuseArchive,
          { actions: 'answerArchived', description: 'row 60: a repeat answers the same (200)' },
        ],
      },
    },
  },
});
