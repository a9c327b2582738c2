/**
 * Usage rows of the SQL control store (interface 2.15; decisions rows 52 to 54).
 *
 * A checkpoint adds a delta to (tenant, day). Counters and the per-model and per-tool
 * maps are merged in code inside one transaction that holds the row's lock (SQLite
 * `BEGIN IMMEDIATE`, PostgreSQL `FOR UPDATE`), so concurrent checkpoints from several
 * processes add up and none is lost.
 */
import type { UsageDay, UsageDelta } from '../control-store.ts';
import {
  int,
  text,
  type SqlDialect,
  type SqlDriver,
  type SqlQueryable,
  type SqlRow,
} from './driver.ts';

type Tokens = UsageDelta['tokens'];
type ToolCalls = UsageDelta['toolCalls'];

const COLUMNS = 'day, events, bytes_archived, sessions_checkpointed, tokens, tool_calls';

/** Sums two token maps model by model. Built from entries, so a key like `__proto__` stays data. */
function addTokens(a: Tokens, b: Tokens): Tokens {
  const sum = new Map(
    Object.entries(a).map(([model, t]) => [model, { input: t.input, output: t.output }]),
  );
  for (const [model, t] of Object.entries(b)) {
    const held = sum.get(model) ?? { input: 0, output: 0 };
    sum.set(model, { input: held.input + t.input, output: held.output + t.output });
  }
  return Object.fromEntries(sum);
}

function addCalls(a: ToolCalls, b: ToolCalls): ToolCalls {
  const sum = new Map(Object.entries(a));
  for (const [tool, n] of Object.entries(b)) sum.set(tool, (sum.get(tool) ?? 0) + n);
  return Object.fromEntries(sum);
}

function toUsageDay(row: SqlRow): UsageDay {
  return {
    day: text(row, 'day'),
    events: int(row, 'events'),
    bytesArchived: int(row, 'bytes_archived'),
    sessionsCheckpointed: int(row, 'sessions_checkpointed'),
    tokens: JSON.parse(text(row, 'tokens')) as Tokens,
    toolCalls: JSON.parse(text(row, 'tool_calls')) as ToolCalls,
  };
}

/**
 * Adds `delta` to the tenant's row for `day`, creating it, inside the transaction `tx`
 * (which must have taken the write lock as `SqlDriver.transaction` does): for callers
 * that move other rows with the usage, such as a work store checkpoint.
 */
export async function addUsageIn(
  tx: SqlQueryable,
  dialect: SqlDialect,
  tenant: string,
  day: string,
  delta: UsageDelta,
): Promise<void> {
  await tx.query(
    `INSERT INTO usage (tenant, ${COLUMNS}) VALUES (?, ?, 0, 0, 0, '{}', '{}') ON CONFLICT (tenant, day) DO NOTHING`,
    [tenant, day],
  );
  const [row] = await tx.query(
    `SELECT ${COLUMNS} FROM usage WHERE tenant = ? AND day = ?${dialect.lockRows}`,
    [tenant, day],
  );
  if (row === undefined) throw new Error(`usage row ${tenant}/${day} vanished`);
  const held = toUsageDay(row);
  await tx.query(
    'UPDATE usage SET events = ?, bytes_archived = ?, sessions_checkpointed = ?, tokens = ?, tool_calls = ? WHERE tenant = ? AND day = ?',
    [
      held.events + delta.events,
      held.bytesArchived + delta.bytesArchived,
      held.sessionsCheckpointed + delta.sessionsCheckpointed,
      JSON.stringify(addTokens(held.tokens, delta.tokens)),
      JSON.stringify(addCalls(held.toolCalls, delta.toolCalls)),
      tenant,
      day,
    ],
  );
}

/** Adds `delta` to the tenant's row for `day`, creating it, in a transaction of its own. */
export async function addUsage(
  driver: SqlDriver,
  tenant: string,
  day: string,
  delta: UsageDelta,
): Promise<void> {
  await driver.transaction((tx) => addUsageIn(tx, driver.dialect, tenant, day, delta));
}

/** The tenant's rows from `from` to `to` inclusive (YYYY-MM-DD compares as text), by day. */
export async function readUsage(
  driver: SqlDriver,
  tenant: string,
  from: string,
  to: string,
): Promise<UsageDay[]> {
  const rows = await driver.query(
    `SELECT ${COLUMNS} FROM usage WHERE tenant = ? AND day >= ? AND day <= ? ORDER BY day`,
    [tenant, from, to],
  );
  return rows.map(toUsageDay);
}
