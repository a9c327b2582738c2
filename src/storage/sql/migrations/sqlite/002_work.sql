-- The work store (src/storage/work-store.ts): leases, due entries and counted usage that
-- service processes share to split background work. Times are unix ms.

-- A lease is free when absent or when `expires <= now`.
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires INTEGER NOT NULL
) STRICT;

-- A removed entry keeps its row with `at` NULL, so the session's next stamp still grows.
CREATE TABLE due (
  session TEXT PRIMARY KEY,
  at INTEGER,
  stamp INTEGER NOT NULL
) STRICT;

CREATE INDEX due_at ON due (at) WHERE at IS NOT NULL;

-- The last cursor of a session whose usage is in the `usage` rows.
CREATE TABLE usage_counted (
  session TEXT PRIMARY KEY,
  through INTEGER NOT NULL
) STRICT;
