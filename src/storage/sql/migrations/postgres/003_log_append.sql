-- One round trip per append: the log store sends a group of batches,
-- possibly on several streams, as one call of this procedure, one statement with one
-- commit of records. For each batch it does what an append transaction
-- used to do in five or more round trips: lock the stream's row, check the idempotency
-- key (decisions row 9: an identical resend answers the original records, a different
-- one under the key is refused), refuse an archived stream, mint `head + 1 …` and one
-- `at`, insert, record the key; then it moves each stream's head once and notifies the
-- tails once per stream, after the records committed (so never for a rollback). A
-- refusal is an answer, not an error, so one batch refused never rolls back the others.
--
-- `batches` is a JSON array of {"s": stream, "k": key or null, "f": fingerprint,
-- "r": [[kind_name, kind_version, producer, to, idem, size, body], …]}. Streams are locked
-- in byte order ("C"), batches of one stream in the order given: two calls with streams in
-- common lock them in the same order, so they wait for each other instead of deadlocking.
-- `now_ms` is the caller's clock; `at` never goes below the stream's previous `at`.
-- `answers` comes back as one JSON object per batch, in the order given: {"o": "landed",
-- "c": first cursor, "a": at}, {"o": "replayed", "r": [record rows]}, {"o": "conflict"}
-- or {"o": "archived"}.
--
-- A procedure, not a function, to commit before it notifies: a transaction that notifies
-- holds a database-wide lock from its commit's start to its end, flush included, so
-- notifying appends would commit one at a time, one disk flush each, however many ran
-- at once. Here the records commit (and flush, sharing flushes with other commits) without
-- that lock; the notifications then go out in a second transaction that wrote nothing and
-- waits for no flush. The server runs both as one statement once it has it, so a client
-- that dies meanwhile still leaves them sent; a server that dies between them drops its
-- listeners, which re-read every followed stream when they reconnect (`signals.ts`). Called
-- outside any transaction block: `CALL log_append(…)` on a connection of its own.
CREATE PROCEDURE log_append(batches jsonb, now_ms bigint, channel text, INOUT answers json DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
  s record;
  b jsonb;
  j integer;
  v_head bigint;
  v_start bigint;
  v_final bigint;
  v_last_at bigint;
  v_key text;
  v_count integer;
  v_payload text;
  v_notes text[] := '{}';
  v_answers jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(batches)]);
  v_answer jsonb;
  held record;
BEGIN
  -- A full notification queue (a listener stopped reading) would fail the notifying
  -- transaction after the records committed; refuse while nothing is written yet.
  IF pg_notification_queue_usage() > 0.9 THEN
    RAISE EXCEPTION 'the notification queue is full' USING ERRCODE = '53000';
  END IF;
  FOR s IN
    SELECT e.v->>'s' AS stream,
           array_agg(e.v ORDER BY e.ord) AS items,
           array_agg(e.ord::integer ORDER BY e.ord) AS idxs
    FROM jsonb_array_elements(batches) WITH ORDINALITY AS e(v, ord)
    GROUP BY e.v->>'s'
    ORDER BY (e.v->>'s') COLLATE "C"
  LOOP
    SELECT t.head, t.final_cursor, t.last_at INTO v_head, v_final, v_last_at
    FROM streams t WHERE t.stream = s.stream FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO streams (stream, head, final_cursor, last_at, created)
      VALUES (s.stream, 0, NULL, 0, now_ms) ON CONFLICT (stream) DO NOTHING;
      SELECT t.head, t.final_cursor, t.last_at INTO v_head, v_final, v_last_at
      FROM streams t WHERE t.stream = s.stream FOR UPDATE;
    END IF;
    v_start := v_head;
    FOR j IN 1 .. array_length(s.items, 1) LOOP
      b := s.items[j];
      v_key := b->>'k';
      v_answer := NULL;
      -- The key first: an identical resend replays even after archiving.
      IF v_key IS NOT NULL THEN
        SELECT i.fingerprint, i.first_cursor, i.last_cursor INTO held
        FROM idempotency i WHERE i.stream = s.stream AND i.key = v_key;
        IF FOUND AND held.fingerprint <> b->>'f' THEN
          v_answer := '{"o": "conflict"}';
        ELSIF FOUND THEN
          SELECT jsonb_build_object('o', 'replayed', 'r', jsonb_agg(to_jsonb(r) ORDER BY r.cursor))
          INTO v_answer FROM records r
          WHERE r.stream = s.stream AND r.cursor BETWEEN held.first_cursor AND held.last_cursor;
        END IF;
      END IF;
      IF v_answer IS NULL AND v_final IS NOT NULL THEN
        v_answer := '{"o": "archived"}';
      END IF;
      IF v_answer IS NULL THEN
        v_last_at := greatest(now_ms, v_last_at);
        INSERT INTO records (stream, cursor, at, kind_name, kind_version, producer,
                             addressed_to, idem, size, body)
        SELECT s.stream, v_head + x.ord, v_last_at, x.v->>0, (x.v->>1)::integer, x.v->>2,
               x.v->>3, x.v->>4, (x.v->>5)::integer, x.v->>6
        FROM jsonb_array_elements(b->'r') WITH ORDINALITY AS x(v, ord);
        GET DIAGNOSTICS v_count = ROW_COUNT;
        IF v_key IS NOT NULL THEN
          INSERT INTO idempotency (stream, key, fingerprint, first_cursor, last_cursor)
          VALUES (s.stream, v_key, b->>'f', v_head + 1, v_head + v_count);
        END IF;
        v_answer := jsonb_build_object('o', 'landed', 'c', v_head + 1, 'a', v_last_at);
        v_head := v_head + v_count;
      END IF;
      v_answers[s.idxs[j]] := v_answer;
    END LOOP;
    -- One head move and one notification per stream, however many batches landed on it.
    -- It carries the records when they fit in one (8000 bytes), so the tails of other
    -- processes need not read them; else it names the head to read up to.
    IF v_head > v_start THEN
      UPDATE streams SET head = v_head, last_at = v_last_at WHERE stream = s.stream;
      SELECT json_build_object('head', v_head, 'stream', s.stream,
                               'records', json_agg(r ORDER BY r.cursor))::text
      INTO v_payload FROM records r WHERE r.stream = s.stream AND r.cursor > v_start;
      IF octet_length(v_payload) > 7900 THEN
        v_payload := v_head || ' ' || s.stream;
      END IF;
      v_notes := v_notes || v_payload;
    END IF;
  END LOOP;
  answers := to_json(v_answers);
  COMMIT;
  FOREACH v_payload IN ARRAY v_notes LOOP
    PERFORM pg_notify(channel, v_payload);
  END LOOP;
END
$$;
