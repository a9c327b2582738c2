-- The first schema of both SQL stores (PostgreSQL). Times are unix ms, JSON is text kept
-- byte for byte as written. Names and ids collate "C" so ordering and `id > ?` compare
-- bytes, as SQLite does, whatever the database's default collation.

-- Log store (interface 2.2 to 2.4). One row per stream mints its cursors: every append
-- locks the row (FOR UPDATE), reads `head`, lands `head + 1 …` and moves `head` in one
-- transaction. `final_cursor` is the archiving record's cursor, NULL while the stream is
-- open. `last_at` keeps `at` from going back along a stream if a clock steps back.
CREATE TABLE streams (
  stream TEXT COLLATE "C" PRIMARY KEY,
  head BIGINT NOT NULL,
  final_cursor BIGINT,
  last_at BIGINT NOT NULL,
  created BIGINT NOT NULL
);

CREATE TABLE records (
  stream TEXT COLLATE "C" NOT NULL,
  cursor BIGINT NOT NULL,
  at BIGINT NOT NULL,
  kind_name TEXT NOT NULL,
  kind_version INTEGER NOT NULL,
  producer TEXT NOT NULL,
  addressed_to TEXT,
  idem TEXT,
  size INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (stream, cursor)
);

-- A key holds one batch per stream (decisions row 9): the cursors it landed.
CREATE TABLE idempotency (
  stream TEXT COLLATE "C" NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  fingerprint TEXT NOT NULL,
  first_cursor BIGINT NOT NULL,
  last_cursor BIGINT NOT NULL,
  PRIMARY KEY (stream, key)
);

-- Control store: versioned JSON documents named by (kind, scope, id).
CREATE TABLE resources (
  kind TEXT COLLATE "C" NOT NULL,
  scope TEXT COLLATE "C" NOT NULL,
  id TEXT COLLATE "C" NOT NULL,
  version BIGINT NOT NULL,
  created BIGINT NOT NULL,
  updated BIGINT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (kind, scope, id)
);

-- Secondary lookups (an install by the hash of its key, …): (kind, name, value) → resource.
CREATE TABLE resource_index (
  kind TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  value TEXT COLLATE "C" NOT NULL,
  scope TEXT COLLATE "C" NOT NULL,
  id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (kind, name, value, scope, id)
);

CREATE INDEX resource_index_owner ON resource_index (kind, scope, id);

-- Secret values, sealed with AES-256-GCM; `mac` answers "changed?" without decrypting.
CREATE TABLE secret_values (
  scope TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  sealed TEXT NOT NULL,
  mac TEXT NOT NULL,
  PRIMARY KEY (scope, name)
);

-- Persisted actor snapshots with an optimistic version.
CREATE TABLE snapshots (
  type TEXT COLLATE "C" NOT NULL,
  id TEXT COLLATE "C" NOT NULL,
  version BIGINT NOT NULL,
  snapshot TEXT NOT NULL,
  PRIMARY KEY (type, id)
);

-- Usage per tenant and UTC day (interface 2.15); maps as JSON text, merged in code.
CREATE TABLE usage (
  tenant TEXT COLLATE "C" NOT NULL,
  day TEXT COLLATE "C" NOT NULL,
  events BIGINT NOT NULL,
  bytes_archived BIGINT NOT NULL,
  sessions_checkpointed BIGINT NOT NULL,
  tokens TEXT NOT NULL,
  tool_calls TEXT NOT NULL,
  PRIMARY KEY (tenant, day)
);
