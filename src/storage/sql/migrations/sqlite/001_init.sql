-- The first schema of both SQL stores (SQLite). Times are unix ms, JSON is text kept
-- byte for byte as written. STRICT tables refuse a value of the wrong type.

-- Log store (interface 2.2 to 2.4). One row per stream mints its cursors: every append
-- takes the write lock, reads `head`, lands `head + 1 …` and moves `head` in one
-- transaction. `final_cursor` is the archiving record's cursor, NULL while the stream is
-- open. `last_at` keeps `at` from going back along a stream if the clock steps back.
CREATE TABLE streams (
  stream TEXT PRIMARY KEY,
  head INTEGER NOT NULL,
  final_cursor INTEGER,
  last_at INTEGER NOT NULL,
  created INTEGER NOT NULL
) STRICT;

CREATE TABLE records (
  stream TEXT NOT NULL,
  cursor INTEGER NOT NULL,
  at INTEGER NOT NULL,
  kind_name TEXT NOT NULL,
  kind_version INTEGER NOT NULL,
  producer TEXT NOT NULL,
  addressed_to TEXT,
  idem TEXT,
  size INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (stream, cursor)
) STRICT;

-- A key holds one batch per stream (decisions row 9): the cursors it landed.
CREATE TABLE idempotency (
  stream TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  first_cursor INTEGER NOT NULL,
  last_cursor INTEGER NOT NULL,
  PRIMARY KEY (stream, key)
) STRICT, WITHOUT ROWID;

-- Control store: versioned JSON documents named by (kind, scope, id).
CREATE TABLE resources (
  kind TEXT NOT NULL,
  scope TEXT NOT NULL,
  id TEXT NOT NULL,
  version INTEGER NOT NULL,
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (kind, scope, id)
) STRICT;

-- Secondary lookups (an install by the hash of its key, …): (kind, name, value) → resource.
CREATE TABLE resource_index (
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  scope TEXT NOT NULL,
  id TEXT NOT NULL,
  PRIMARY KEY (kind, name, value, scope, id)
) STRICT, WITHOUT ROWID;

CREATE INDEX resource_index_owner ON resource_index (kind, scope, id);

-- Secret values, sealed with AES-256-GCM; `mac` answers "changed?" without decrypting.
CREATE TABLE secret_values (
  scope TEXT NOT NULL,
  name TEXT NOT NULL,
  sealed TEXT NOT NULL,
  mac TEXT NOT NULL,
  PRIMARY KEY (scope, name)
) STRICT;

-- Persisted actor snapshots with an optimistic version.
CREATE TABLE snapshots (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  version INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  PRIMARY KEY (type, id)
) STRICT;

-- Usage per tenant and UTC day (interface 2.15); maps as JSON text, merged in code.
CREATE TABLE usage (
  tenant TEXT NOT NULL,
  day TEXT NOT NULL,
  events INTEGER NOT NULL,
  bytes_archived INTEGER NOT NULL,
  sessions_checkpointed INTEGER NOT NULL,
  tokens TEXT NOT NULL,
  tool_calls TEXT NOT NULL,
  PRIMARY KEY (tenant, day)
) STRICT;
