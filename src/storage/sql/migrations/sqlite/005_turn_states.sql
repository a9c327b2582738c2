-- Saved turn states (src/turns/state-snapshot.ts): a session's turn state at `cursor`,
-- sealed under its tenant's key, so taking a long session up replays only what followed.
CREATE TABLE turn_states (
  session TEXT PRIMARY KEY,
  cursor INTEGER NOT NULL,
  state TEXT NOT NULL
) STRICT;
