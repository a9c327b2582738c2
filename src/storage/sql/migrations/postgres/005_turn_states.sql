-- Saved turn states (src/turns/state-snapshot.ts): a session's turn state at `cursor`,
-- sealed under its tenant's key, so taking a long session up replays only what followed.
CREATE TABLE turn_states (
  session TEXT COLLATE "C" PRIMARY KEY,
  cursor BIGINT NOT NULL,
  state TEXT NOT NULL
);
