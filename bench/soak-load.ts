/**
 * The users of `npm run soak`: conversations and passing tails, every call counted.
 *
 * - A conversation opens a session with the install key, tails it (NDJSON or WebSocket,
 *   in turn), sends TURNS_PER_SESSION messages, each waiting for its `turn.ended` on the
 *   tail: most are plain (answered `completed`), some `/fail 1` (one failed attempt,
 *   then `completed` after the option's backoff), some `/slow 200` followed at once by a
 *   `turn.cancel` (`cancelled`, or `completed` when the cancel came before the turn
 *   started). Then it archives the session with its tail still open, and the tail must
 *   end by itself after `session.archived`.
 * - A passing tail opens on a live session of some conversation, from cursor 1, reads
 *   for a moment and goes.
 *
 * Every HTTP answer is counted by status; a 5xx, an answer other than the one expected,
 * a refused tail, a tail that fails and a turn that ends otherwise than expected are
 * errors, kept (the first few in full) for the report.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { messageBody } from './turns-client.ts';
import { SoakTail, type TailSession, type Transport } from './soak-tail.ts';

const TURNS_PER_SESSION = 4;
/** The longest a turn may take before the soak calls it lost (a `/fail 1` backs off 1 s). */
const TURN_TIMEOUT_MS = 30_000;
/** Errors kept in full for the report. */
const KEPT_ERRORS = 10;

/** What the load did, for the report. */
export class SoakCounts {
  readonly statuses = new Map<number, number>();
  readonly turns = new Map<string, number>();
  requests = 0;
  errors = 0;
  serverErrors = 0;
  sessionsOpened = 0;
  sessionsArchived = 0;
  tailsOpened = 0;
  tailRecords = 0;
  readonly kept: string[] = [];

  error(what: string): void {
    this.errors += 1;
    if (this.kept.length < KEPT_ERRORS) this.kept.push(what);
  }

  answered(status: number): void {
    this.requests += 1;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if (status >= 500) this.serverErrors += 1;
  }
}

/** The soak's calls to one service, with one install key. */
export class SoakLoad {
  readonly #base: string;
  readonly #key: string;
  readonly #counts: SoakCounts;
  readonly #stop: AbortSignal;
  /** Sessions of running conversations that passing tails may read. */
  readonly #live = new Set<TailSession>();
  readonly #opened: (session: TailSession) => void;

  /** `opened` hears every session opened (the deployment drops their keys at the end). */
  constructor(
    base: string,
    key: string,
    counts: SoakCounts,
    stop: AbortSignal,
    opened: (session: TailSession) => void,
  ) {
    this.#base = base;
    this.#key = key;
    this.#counts = counts;
    this.#stop = stop;
    this.#opened = opened;
  }

  /** One request, counted; answers the parsed body when the status is `expected`. */
  async #call(
    expected: number,
    method: string,
    path: string,
    token: string,
    body?: string,
  ): Promise<unknown> {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined
          ? {}
          : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
      },
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    this.#counts.answered(response.status);
    if (response.status !== expected) {
      throw new Error(`${method} ${path.split('?')[0]} answered ${response.status}: ${text}`);
    }
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  /** Runs one conversation after another until the soak stops. */
  async conversations(worker: number): Promise<void> {
    for (let n = 0; !this.#stop.aborted; n++) {
      const transport: Transport = (worker + n) % 2 === 0 ? 'ndjson' : 'websocket';
      try {
        await this.#conversation(`soak-${worker}-${n}`, transport);
      } catch (error) {
        this.#counts.error(error instanceof Error ? error.message : String(error));
        await sleep(500);
      }
    }
  }

  async #conversation(principal: string, transport: Transport): Promise<void> {
    const opened = (await this.#call(
      201,
      'POST',
      `/sessions?principal=${principal}`,
      this.#key,
    )) as {
      session: string;
      token: string;
    };
    this.#counts.sessionsOpened += 1;
    const session = { id: opened.session, token: opened.token };
    this.#opened(session);
    const tail = await SoakTail.open(this.#base, session, 1, transport);
    this.#counts.tailsOpened += 1;
    this.#live.add(session);
    try {
      for (let turn = 0; turn < TURNS_PER_SESSION && !this.#stop.aborted; turn++) {
        await this.#turn(session, tail, Math.random());
        await sleep(50 + Math.random() * 100);
      }
    } finally {
      this.#live.delete(session);
    }
    await this.#call(200, 'POST', `/sessions/${session.id}/archive`, this.#key);
    this.#counts.sessionsArchived += 1;
    await within(tail.done, 10_000, 'the tail of an archived session did not end');
    this.#counts.tailRecords += tail.records;
    if (tail.failure !== null) throw tail.failure;
  }

  /** One message and its turn: plain, `/fail 1` or `/slow 200` with a cancel. */
  async #turn(session: TailSession, tail: SoakTail, draw: number): Promise<void> {
    const [text, expected] =
      draw < 0.15
        ? ['/fail 1', ['completed']]
        : draw < 0.35
          ? ['/slow 200', ['cancelled', 'completed']]
          : [`hello ${randomUUID()}`, ['completed']];
    const path = `/sessions/${session.id}/events`;
    const landed = (await this.#call(200, 'POST', path, session.token, messageBody(text))) as {
      cursor: number;
    }[];
    const cursor = landed[0]?.cursor ?? 0;
    const ended = tail.turnEnded(cursor);
    if (text === '/slow 200') {
      await sleep(20);
      const cancel = JSON.stringify([
        { kind: { name: 'turn.cancel', version: 1 }, body: { turn: null } },
      ]);
      await this.#call(200, 'POST', path, session.token, cancel);
    }
    const reason = await within(ended, TURN_TIMEOUT_MS, `the turn after ${cursor} did not end`);
    this.#counts.turns.set(reason, (this.#counts.turns.get(reason) ?? 0) + 1);
    if (!expected.includes(reason)) this.#counts.error(`"${text}" ended ${reason}`);
  }

  /** Opens a passing tail on a live session now and then, until the soak stops. */
  async passingTails(worker: number): Promise<void> {
    for (let n = 0; !this.#stop.aborted; n++) {
      const sessions = [...this.#live];
      const session = sessions[Math.floor(Math.random() * sessions.length)];
      if (session === undefined) {
        await sleep(200);
        continue;
      }
      const transport: Transport = (worker + n) % 2 === 0 ? 'websocket' : 'ndjson';
      try {
        const tail = await SoakTail.open(this.#base, session, 1, transport);
        this.#counts.tailsOpened += 1;
        await sleep(300 + Math.random() * 1500);
        tail.close();
        this.#counts.tailRecords += tail.records;
        if (tail.failure !== null) throw tail.failure;
      } catch (error) {
        // A session archived meanwhile refuses nothing (its tail replays and ends).
        this.#counts.error(
          `passing tail: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }
}

/** Rejects naming `what` unless `promise` settles within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const timeout = new AbortController();
  try {
    return await Promise.race([
      promise,
      sleep(ms, undefined, { signal: timeout.signal }).then(() => {
        throw new Error(`${what} within ${ms} ms`);
      }),
    ]);
  } finally {
    timeout.abort();
  }
}
