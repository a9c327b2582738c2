/**
 * The records a turn lands, with their producers and idem keys (decisions row 8, part B).
 *
 * Every step of a turn has one key, `svc:<turn>:<step>`, and lands under it as a store
 * key too: a step run again after a crash or by another process lands once (an identical
 * body replays; a different one is refused and the first stands). The steps:
 *
 * | step | record | key |
 * |---|---|---|
 * | open the turn | turn.started | `svc:<first input>:start` (the turn is not named until it lands) |
 * | attempt a of round r | model.output or inference.failed | `svc:<turn>:r<r>a<a>` (one outcome per attempt) |
 * | compact before attempt a of round r | compaction.requested | `svc:<turn>:r<r>a<a>:compact` |
 * | its summary | compaction.completed | `svc:<turn>:c<requested>` |
 * | answer call c | invoke.denied | `svc:<turn>:r<r>:<c>` |
 * | end the turn | turn.ended | `svc:<turn>:end` (shared with an archive's, so one turn.ended) |
 */
import { hash } from 'node:crypto';
import { RECORD_KIND_VERSION } from '../schemas/record-kinds.ts';
import { canonicalJson } from '../sessions/canonical-json.ts';
import type { AppendBatch, PendingRecord } from '../storage/log-store.ts';

/** Part B producers of the turn's records. */
export const PRODUCERS = {
  turn: 'service:turn',
  authorizer: 'service:authorizer',
  compactor: 'service:compactor',
  mcp: 'service:mcp',
} as const;

/**
 * A service record of `kind` with `body`, under the idem `key`. The bodies are plain data
 * the steps build, so the intake's direct writer of canonical JSON serves (the same text
 * as the package's, at a fraction of its cost: a turn writes three or more bodies).
 */
export function serviceRecord(
  kind: string,
  producer: string,
  key: string,
  body: unknown,
): PendingRecord {
  const text = canonicalJson(body);
  if (text === undefined) throw new Error(`${kind} has no canonical JSON form`);
  return {
    kind: { name: kind, version: RECORD_KIND_VERSION },
    producer,
    to: null,
    idem: key,
    body: text,
  };
}

/**
 * One record as a batch under its own key. The fingerprint is `plain` (the body before
 * sealing) when given, so a deterministic step run twice replays rather than conflicts.
 */
export function keyedBatch(stream: string, record: PendingRecord, plain?: unknown): AppendBatch {
  const fingerprintOf = plain === undefined ? record.body : (canonicalJson(plain) ?? record.body);
  return {
    stream,
    records: [record],
    key: record.idem,
    fingerprint: hash('sha256', fingerprintOf, 'hex'),
  };
}

/** Row 8 keys of the steps (see the table above). */
export const stepKey = {
  start: (firstInput: number) => `svc:${firstInput}:start`,
  attempt: (turn: number, round: number, attempt: number) => `svc:${turn}:r${round}a${attempt}`,
  compact: (turn: number, round: number, attempt: number) =>
    `svc:${turn}:r${round}a${attempt}:compact`,
  summary: (turn: number, requested: number) => `svc:${turn}:c${requested}`,
  answer: (turn: number, round: number, call: string) => `svc:${turn}:r${round}:${call}`,
  end: (turn: number) => `svc:${turn}:end`,
};
