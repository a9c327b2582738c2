/**
 * The control store on SQL: versioned JSON resources with secondary indexes, sealed
 * secret values, actor snapshots and usage rows, one code path for SQLite and PostgreSQL.
 *
 * Secrets: a value lives sealed in `secret_values` (`secret-box.ts`) and never in a
 * resource. `putSecretValue` also writes the `secret` resource `{name}` in the same
 * transaction (version, created, updated), so `list('secret', scope)` lists the names a
 * tenant holds (decisions row 55); deleting that resource deletes the value with it.
 * An unchanged value (same HMAC) writes nothing, not even `updated`.
 */
import type { Clock } from '../../clock.ts';
import { Conflict } from '../../errors.ts';
import type {
  ControlStore,
  ControlWrite,
  ListOptions,
  SnapshotRecord,
  UsageDay,
  UsageDelta,
  Versioned,
} from '../control-store.ts';
import type { ResourceKind, ResourceValues } from '../../resources/types.ts';
import { createSecretBox, type SecretBox, type SecretsKeyring } from '../secret-box.ts';
import { applyWrites, purgeExpired, RESOURCE_COLUMNS, toVersioned } from './control-writes.ts';
import { int, text, type SqlDriver, type SqlValue } from './driver.ts';
import { addUsage, readUsage } from './usage.ts';

/** The HKDF label of secret values: a new scheme gets a new label. */
const SECRET_PURPOSE = 'control-store/secret-values/v1';

export interface SqlControlStoreParts {
  readonly driver: SqlDriver;
  /** 32 bytes, or a ring of them whose current key seals (`secret-box.ts`). */
  readonly secretsKey: Buffer | SecretsKeyring;
  readonly clock: Clock;
}

/** The AAD and HMAC context of a secret: its scope and name, unambiguously joined. */
function secretContext(scope: string, name: string): string {
  return JSON.stringify([scope, name]);
}

export class SqlControlStore implements ControlStore {
  readonly backend: string;
  readonly #driver: SqlDriver;
  readonly #box: SecretBox;
  readonly #clock: Clock;

  constructor(parts: SqlControlStoreParts) {
    this.backend = parts.driver.dialect.name;
    this.#driver = parts.driver;
    this.#box = createSecretBox(parts.secretsKey, SECRET_PURPOSE);
    this.#clock = parts.clock;
  }

  async get<K extends ResourceKind>(
    kind: K,
    scope: string,
    id: string,
  ): Promise<Versioned<ResourceValues[K]> | null> {
    const [row] = await this.#driver.query(
      `SELECT ${RESOURCE_COLUMNS} FROM resources WHERE kind = ? AND scope = ? AND id = ?`,
      [kind, scope, id],
    );
    return row === undefined ? null : toVersioned<ResourceValues[K]>(row);
  }

  write(writes: readonly ControlWrite[]): Promise<Versioned<unknown>[]> {
    const now = this.#clock.now();
    return this.#driver.transaction((tx) => applyWrites(tx, writes, now));
  }

  async list<K extends ResourceKind>(
    kind: K,
    scope: string,
    options: ListOptions = {},
  ): Promise<Versioned<ResourceValues[K]>[]> {
    const params: SqlValue[] = [kind, scope];
    let sql = `SELECT ${RESOURCE_COLUMNS} FROM resources WHERE kind = ? AND scope = ?`;
    if (options.after !== undefined) {
      sql += ' AND id > ?';
      params.push(options.after);
    }
    sql += ' ORDER BY id';
    if (options.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(Math.max(0, options.limit));
    }
    return (await this.#driver.query(sql, params)).map((row) =>
      toVersioned<ResourceValues[K]>(row),
    );
  }

  async findByIndex<K extends ResourceKind>(
    kind: K,
    name: string,
    value: string,
  ): Promise<Versioned<ResourceValues[K]>[]> {
    const columns = RESOURCE_COLUMNS.split(', ')
      .map((column) => `r.${column}`)
      .join(', ');
    const rows = await this.#driver.query(
      `SELECT ${columns} FROM resource_index i JOIN resources r ON r.kind = i.kind AND r.scope = i.scope AND r.id = i.id
       WHERE i.kind = ? AND i.name = ? AND i.value = ? ORDER BY r.scope, r.id`,
      [kind, name, value],
    );
    return rows.map((row) => toVersioned<ResourceValues[K]>(row));
  }

  async putSecretValue(scope: string, name: string, value: string): Promise<{ changed: boolean }> {
    const context = secretContext(scope, name);
    const mac = this.#box.digest(value, context);
    const now = this.#clock.now();
    return this.#driver.transaction(async (tx) => {
      const [held] = await tx.query(
        `SELECT mac FROM secret_values WHERE scope = ? AND name = ?${this.#driver.dialect.lockRows}`,
        [scope, name],
      );
      if (held !== undefined && this.#box.matches(text(held, 'mac'), value, context)) {
        return { changed: false };
      }
      await tx.query(
        'INSERT INTO secret_values (scope, name, sealed, mac) VALUES (?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET sealed = excluded.sealed, mac = excluded.mac',
        [scope, name, this.#box.seal(value, context), mac],
      );
      await applyWrites(
        tx,
        [{ op: 'put', kind: 'secret', scope, id: name, value: { name }, expect: null }],
        now,
      );
      return { changed: true };
    });
  }

  async readSecretValue(scope: string, name: string): Promise<string | null> {
    const [row] = await this.#driver.query(
      'SELECT sealed FROM secret_values WHERE scope = ? AND name = ?',
      [scope, name],
    );
    return row === undefined
      ? null
      : this.#box.open(text(row, 'sealed'), secretContext(scope, name));
  }

  async loadSnapshot(type: string, id: string): Promise<SnapshotRecord | null> {
    const [row] = await this.#driver.query(
      'SELECT version, snapshot FROM snapshots WHERE type = ? AND id = ?',
      [type, id],
    );
    return row === undefined
      ? null
      : { version: int(row, 'version'), snapshot: JSON.parse(text(row, 'snapshot')) as unknown };
  }

  async saveSnapshot(type: string, id: string, snapshot: unknown, expect: number): Promise<number> {
    const body = JSON.stringify(snapshot) as string | undefined;
    if (body === undefined) throw new TypeError('a snapshot must be JSON');
    // One statement each way: the check is its WHERE / ON CONFLICT, race-free on both engines.
    const [row] =
      expect === 0
        ? await this.#driver.query(
            'INSERT INTO snapshots (type, id, version, snapshot) VALUES (?, ?, 1, ?) ON CONFLICT (type, id) DO NOTHING RETURNING version',
            [type, id, body],
          )
        : await this.#driver.query(
            'UPDATE snapshots SET version = version + 1, snapshot = ? WHERE type = ? AND id = ? AND version = ? RETURNING version',
            [body, type, id, expect],
          );
    if (row === undefined) {
      throw new Conflict('version_conflict', `snapshot ${type}/${id} is not at version ${expect}`);
    }
    return int(row, 'version');
  }

  purgeExpired(now: number, limit: number): Promise<number> {
    return this.#driver.transaction((tx) => purgeExpired(tx, now, limit));
  }

  addUsage(tenant: string, day: string, delta: UsageDelta): Promise<void> {
    return addUsage(this.#driver, tenant, day, delta);
  }

  readUsage(tenant: string, from: string, to: string): Promise<UsageDay[]> {
    return readUsage(this.#driver, tenant, from, to);
  }

  async ping(): Promise<void> {
    await this.#driver.query('SELECT 1 AS ok');
  }

  close(): Promise<void> {
    return this.#driver.close();
  }
}
