/**
 * The versioned writes of the SQL control store, applied inside one transaction.
 *
 * Each version check is the statement's own WHERE or ON CONFLICT, so it holds under
 * concurrency without a prior read: `expect 0` is an INSERT that does nothing on an
 * existing row, `expect n` an UPDATE (or DELETE) of the row at version n, `expect null`
 * an upsert. A statement that touches no row is a failed check: the write throws
 * `Conflict('version_conflict')` and the caller's transaction rolls back the whole batch.
 * On PostgreSQL a racing writer waits on the row lock and then re-evaluates the check
 * against the committed row, so of two writers from one version exactly one wins.
 */
import { Conflict } from '../../errors.ts';
import type { ResourceKind } from '../../resources/types.ts';
import type { ControlWrite, IndexValues, Versioned } from '../control-store.ts';
import { int, text, valuesList, type SqlQueryable, type SqlRow } from './driver.ts';

export const RESOURCE_COLUMNS = 'kind, scope, id, version, created, updated, value';

/** A stored resource row as the port answers it. */
export function toVersioned<T>(row: SqlRow): Versioned<T> {
  return {
    kind: text(row, 'kind') as ResourceKind,
    scope: text(row, 'scope'),
    id: text(row, 'id'),
    version: int(row, 'version'),
    created: int(row, 'created'),
    updated: int(row, 'updated'),
    value: JSON.parse(text(row, 'value')) as T,
  };
}

function conflict(write: ControlWrite): Conflict {
  const expected = write.expect === 0 ? 'absent' : `at version ${String(write.expect)}`;
  return new Conflict(
    'version_conflict',
    `${write.kind} ${write.scope}/${write.id} is not ${expected}`,
  );
}

function json(value: unknown): string {
  const encoded = JSON.stringify(value) as string | undefined;
  if (encoded === undefined) throw new TypeError('a resource value must be JSON');
  return encoded;
}

const RETURNING = `RETURNING ${RESOURCE_COLUMNS}`;

async function put(
  tx: SqlQueryable,
  write: Extract<ControlWrite, { op: 'put' }>,
  now: number,
): Promise<SqlRow | undefined> {
  const { kind, scope, id } = write;
  const value = json(write.value);
  // An absent `expires` keeps what a replaced resource had (and nothing on a new one).
  const expires = write.expires ?? null;
  const keep = write.expires === undefined;
  const insert = `INSERT INTO resources (${RESOURCE_COLUMNS}, expires) VALUES (?, ?, ?, 1, ?, ?, ?, ?)`;
  if (write.expect === 0) {
    const [row] = await tx.query(
      `${insert} ON CONFLICT (kind, scope, id) DO NOTHING ${RETURNING}`,
      [kind, scope, id, now, now, value, expires],
    );
    return row;
  }
  if (write.expect === null) {
    const upsert = `${insert} ON CONFLICT (kind, scope, id) DO UPDATE SET version = resources.version + 1, updated = excluded.updated, value = excluded.value${keep ? '' : ', expires = excluded.expires'} ${RETURNING}`;
    const [row] = await tx.query(upsert, [kind, scope, id, now, now, value, expires]);
    return row;
  }
  const [row] = await tx.query(
    `UPDATE resources SET version = version + 1, updated = ?, value = ?${keep ? '' : ', expires = ?'} WHERE kind = ? AND scope = ? AND id = ? AND version = ? ${RETURNING}`,
    [now, value, ...(keep ? [] : [expires]), kind, scope, id, write.expect],
  );
  return row;
}

async function replaceIndex(
  tx: SqlQueryable,
  kind: string,
  scope: string,
  id: string,
  index: IndexValues,
) {
  await tx.query('DELETE FROM resource_index WHERE kind = ? AND scope = ? AND id = ?', [
    kind,
    scope,
    id,
  ]);
  const entries = Object.entries(index).flatMap(([name, values]) =>
    [...new Set(values)].map((value) => [kind, name, value, scope, id]),
  );
  if (entries.length === 0) return;
  await tx.query(
    `INSERT INTO resource_index (kind, name, value, scope, id) VALUES ${valuesList(entries.length, 5)} ON CONFLICT DO NOTHING`,
    entries.flat(),
  );
}

async function remove(
  tx: SqlQueryable,
  write: Extract<ControlWrite, { op: 'delete' }>,
): Promise<void> {
  const { kind, scope, id } = write;
  if (write.expect === null) {
    await tx.query('DELETE FROM resources WHERE kind = ? AND scope = ? AND id = ?', [
      kind,
      scope,
      id,
    ]);
  } else {
    const deleted = await tx.query(
      'DELETE FROM resources WHERE kind = ? AND scope = ? AND id = ? AND version = ? RETURNING version',
      [kind, scope, id, write.expect],
    );
    if (deleted.length === 0) throw conflict(write);
  }
  await tx.query('DELETE FROM resource_index WHERE kind = ? AND scope = ? AND id = ?', [
    kind,
    scope,
    id,
  ]);
  // A secret's document and its sealed value go together (see putSecretValue).
  if (kind === 'secret') {
    await tx.query('DELETE FROM secret_values WHERE scope = ? AND name = ?', [scope, id]);
  }
}

/**
 * `purgeExpired` of the port on `tx`: the due resources, oldest first, then their index
 * entries and the snapshots of the actors named like them. The resources go first, in one
 * statement, so of two purges racing for a row only one answers it.
 */
export async function purgeExpired(tx: SqlQueryable, now: number, limit: number): Promise<number> {
  const gone = await tx.query(
    `DELETE FROM resources WHERE (kind, scope, id) IN (SELECT kind, scope, id FROM resources WHERE expires IS NOT NULL AND expires <= ? ORDER BY expires LIMIT ?) RETURNING kind, scope, id`,
    [now, Math.max(0, limit)],
  );
  if (gone.length === 0) return 0;
  const keys = gone.map((row) => [text(row, 'kind'), text(row, 'scope'), text(row, 'id')]);
  await tx.query(
    `DELETE FROM resource_index WHERE (kind, scope, id) IN (VALUES ${valuesList(keys.length, 3)})`,
    keys.flat(),
  );
  await tx.query(
    `DELETE FROM snapshots WHERE (type, id) IN (VALUES ${valuesList(keys.length, 2)})`,
    keys.flatMap(([kind, , id]) => [kind ?? '', id ?? '']),
  );
  return gone.length;
}

/**
 * Applies `writes` in order on `tx`; answers the resources the puts wrote, in order
 * (a delete answers nothing). Throws `Conflict('version_conflict')` at the first
 * failed check, leaving the rollback to the caller's transaction.
 */
export async function applyWrites(
  tx: SqlQueryable,
  writes: readonly ControlWrite[],
  now: number,
): Promise<Versioned<unknown>[]> {
  const written: Versioned<unknown>[] = [];
  for (const write of writes) {
    if (write.op === 'delete') {
      await remove(tx, write);
      continue;
    }
    const row = await put(tx, write, now);
    if (row === undefined) throw conflict(write);
    // Absent `index` keeps the entries; `{}` clears them.
    if (write.index !== undefined)
      await replaceIndex(tx, write.kind, write.scope, write.id, write.index);
    written.push(toVersioned(row));
  }
  return written;
}
