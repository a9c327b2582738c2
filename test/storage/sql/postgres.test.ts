/**
 * The PostgreSQL stores against the log, control and work store contracts, each suite in
 * a schema of its own.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LogStore, StoredRecord } from '../../../src/storage/log-store.ts';
import {
  openPostgresControlStore,
  openPostgresLogStore,
  openPostgresWorkStore,
} from '../../../src/storage/sql/open.ts';
import { describeControlStore } from '../../contracts/control-store.contract.ts';
import { within } from '../../contracts/log-store-fixture.ts';
import { describeLogStore } from '../../contracts/log-store.contract.ts';
import { describeWorkStore } from '../../contracts/work-store.contract.ts';
import { createTestSchema, shippedMigrations } from './pg-schema.ts';

describeLogStore('postgres', async () => {
  const { url, schema, drop } = await createTestSchema();
  return {
    open: () => openPostgresLogStore({ url, schema }),
    cleanup: drop,
  };
});

describeControlStore('postgres', async () => {
  const { url, schema, query, drop } = await createTestSchema();
  const secretsKey = randomBytes(32);
  return {
    open: () => openPostgresControlStore({ url, schema, secretsKey }),
    // Every row of every table in the schema, as JSON text.
    atRest: async () => {
      const tables = await query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema]);
      const dumps = await Promise.all(
        tables.map(({ tablename }) =>
          query(`SELECT row_to_json(t)::text AS row FROM ${String(tablename)} t`),
        ),
      );
      return dumps
        .flat()
        .map(({ row }) => String(row))
        .join('\n');
    },
    cleanup: drop,
  };
});

describeWorkStore('postgres', async () => {
  const { url, schema, drop } = await createTestSchema();
  return {
    open: () => openPostgresWorkStore({ url, schema }),
    openControl: () => openPostgresControlStore({ url, schema, secretsKey: randomBytes(32) }),
    cleanup: drop,
  };
});

describe('postgres log store under load', () => {
  it('migrates once when several processes open a fresh schema together', async () => {
    const schema = await createTestSchema();
    try {
      const stores = await Promise.all(
        Array.from({ length: 4 }, () =>
          openPostgresLogStore({ url: schema.url, schema: schema.schema }),
        ),
      );
      await Promise.all(stores.map((store) => store.close()));
      const applied = await schema.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(applied).toEqual(await shippedMigrations('postgres'));
    } finally {
      await schema.drop();
    }
  });

  it('mints every cursor 1..N once when two instances append to one stream at once', async () => {
    const schema = await createTestSchema();
    const stores = await Promise.all(
      [0, 1].map(() => openPostgresLogStore({ url: schema.url, schema: schema.schema })),
    );
    try {
      const stream = `s-${randomUUID()}`;
      const record = (n: number) => ({
        kind: { name: 'message.submitted', version: 1 },
        producer: 'principal:load',
        to: null,
        idem: null,
        body: JSON.stringify({ n }),
      });
      // Eight concurrent writers per instance, 25 batches of 1 to 3 records each.
      let next = 0;
      const writer = async (store: LogStore) => {
        const acknowledged: StoredRecord[] = [];
        for (let i = 0; i < 25; i++) {
          const size = 1 + (next % 3);
          const batch = Array.from({ length: size }, () => record(next++));
          acknowledged.push(
            ...(await store.append({ stream, records: batch, key: null, fingerprint: '' })).records,
          );
        }
        return acknowledged;
      };
      const acknowledged = (
        await Promise.all(stores.flatMap((store) => Array.from({ length: 8 }, () => writer(store))))
      ).flat();
      const stored = await stores[0]?.read(stream, { from: 1 });
      expect(stored?.map((r) => r.envelope.cursor)).toEqual(acknowledged.map((_, i) => i + 1));
      expect(new Set(stored?.map((r) => r.body)).size).toBe(next);
      for (const record of acknowledged)
        expect(stored?.[record.envelope.cursor - 1]).toEqual(record);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await schema.drop();
    }
  });

  it('keeps a tail alive when its listening connection is cut', async () => {
    const schema = await createTestSchema();
    const [tailing, writing] = await Promise.all(
      [0, 1].map(() => openPostgresLogStore({ url: schema.url, schema: schema.schema })),
    );
    try {
      const stream = `s-${randomUUID()}`;
      const seen: number[] = [];
      const done = (async () => {
        for await (const record of tailing?.tail(stream, { from: 1, to: 3 }) ?? []) {
          seen.push(record.envelope.cursor);
        }
      })();
      const one = (n: number) => ({
        stream,
        key: null,
        fingerprint: '',
        records: [
          { kind: { name: 'k.a', version: 1 }, producer: 'p', to: null, idem: null, body: `${n}` },
        ],
      });
      await writing?.append(one(1));
      await expect.poll(() => seen, { timeout: 5000 }).toEqual([1]);
      // Every listener of the schema loses its connection; the next append must still arrive.
      const cut = await schema.query(
        'SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE query = $1',
        [`LISTEN log_appended_${schema.schema}`],
      );
      expect(cut.length).toBeGreaterThanOrEqual(1);
      await writing?.append(one(2));
      await within(5000, done, 'the tail after its listener was cut');
      expect(seen).toEqual([1, 2]);
    } finally {
      await Promise.all([tailing?.close(), writing?.close()]);
      await schema.drop();
    }
  });
});
