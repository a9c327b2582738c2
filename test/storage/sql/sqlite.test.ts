/**
 * The SQLite stores (`node:sqlite`, a WAL file in a fresh temp folder) against the log,
 * control and work store contracts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import {
  openSqliteControlStore,
  openSqliteLogStore,
  openSqliteStores,
  openSqliteWorkStore,
  SQLITE_FILE,
} from '../../../src/storage/sql/open.ts';
import { describeControlStore } from '../../contracts/control-store.contract.ts';
import { describeLogStore } from '../../contracts/log-store.contract.ts';
import { describeWorkStore } from '../../contracts/work-store.contract.ts';
import { shippedMigrations } from './pg-schema.ts';

describeLogStore('sqlite', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'sql-log-'));
  const file = path.join(folder, 'service.sqlite');
  return {
    open: () => openSqliteLogStore({ file }),
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
});

describeControlStore('sqlite', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'sql-control-'));
  const file = path.join(folder, 'service.sqlite');
  const secretsKey = randomBytes(32);
  return {
    open: () => openSqliteControlStore({ file, secretsKey }),
    // The database and its WAL as bytes: a secret must not appear in any page.
    atRest: async () => {
      const files = (await readdir(folder)).map((name) => path.join(folder, name));
      const bytes = await Promise.all(files.map((name) => readFile(name)));
      return Buffer.concat(bytes).toString('latin1');
    },
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
});

describeWorkStore('sqlite', async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'sql-work-'));
  const file = path.join(folder, 'service.sqlite');
  return {
    open: () => openSqliteWorkStore({ file }),
    openControl: () => openSqliteControlStore({ file, secretsKey: randomBytes(32) }),
    cleanup: () => rm(folder, { recursive: true, force: true }),
  };
});

describe('sqlite stores on a data folder', () => {
  it('creates the folder and file, migrates once, and reopens what it wrote', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'sql-open-'));
    const dataDir = path.join(parent, 'nested', 'data');
    const secretsKey = randomBytes(32);
    try {
      const opened = await Promise.all(
        [0, 1, 2].map(() => openSqliteStores({ dataDir, secretsKey })),
      );
      expect(await readdir(dataDir)).toContain(SQLITE_FILE);
      const [first] = opened;
      await first?.log.append({
        stream: 's',
        key: null,
        fingerprint: '',
        records: [
          { kind: { name: 'k.a', version: 1 }, producer: 'p', to: null, idem: null, body: '{}' },
        ],
      });
      await first?.control.putSecretValue('t', 'name', 'value');
      expect(await first?.work.markDue('s', 1)).toBe(1);
      await Promise.all(opened.map((stores) => stores.close()));
      const again = await openSqliteStores({ file: path.join(dataDir, SQLITE_FILE), secretsKey });
      expect(await again.log.head('s')).toEqual({ head: 1, archived: false });
      expect(await again.control.readSecretValue('t', 'name')).toBe('value');
      expect(again.log.backend).toBe('sqlite');
      expect(await again.work.dueEntry('s')).toEqual({ at: 1, stamp: 1 });
      await again.close();
      const db = new DatabaseSync(path.join(dataDir, SQLITE_FILE));
      expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(
        await shippedMigrations('sqlite'),
      );
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
      db.close();
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
