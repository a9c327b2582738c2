-- The work store (src/storage/work-store.ts): leases, due entries and counted usage that
-- service processes share to split background work. Times are unix ms.

-- A lease is free when absent or when `expires <= now`.
CREATE TABLE leases (
  name TEXT COLLATE "C" PRIMARY KEY,
  holder TEXT COLLATE "C" NOT NULL,
  expires BIGINT NOT NULL
);

-- A removed entry keeps its row with `at` NULL, so the session's next stamp still grows.
-- `session` collates "C" so ties in `due` order by bytes, as SQLite does.
CREATE TABLE due (
  session TEXT COLLATE "C" PRIMARY KEY,
  at BIGINT,
  stamp BIGINT NOT NULL
);

CREATE INDEX due_at ON due (at) WHERE at IS NOT NULL;

-- The last cursor of a session whose usage is in the `usage` rows.
CREATE TABLE usage_counted (
  session TEXT COLLATE "C" PRIMARY KEY,
  through BIGINT NOT NULL
);
