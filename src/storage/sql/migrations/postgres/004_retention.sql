-- Retention: a resource that may be deleted from a time on carries it
-- in `expires` (unix ms); NULL keeps it for good. `purgeExpired` deletes the due ones
-- oldest first through the partial index, which holds only the rows that ever expire.
ALTER TABLE resources ADD COLUMN expires BIGINT;

CREATE INDEX resources_expires ON resources (expires) WHERE expires IS NOT NULL;
