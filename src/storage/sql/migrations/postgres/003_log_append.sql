-- One round trip per append (issue 13, item 4): the log store sends a group of batches,
-- possibly on several streams, as one call of this function, which is one statement and
-- so one transaction and one commit. For each batch it does what an append transaction
-- used to do in five or more round trips: lock the stream's row, check the idempotency
-- key (decisions row 9: an identical resend answers the original records, a different
-- one under the key is refused), refuse an archived stream, mint `head + 1 …` and one
-- `at`, insert, record the key; then it moves each stream's head once and notifies the
-- tails once per stream. A refusal is an answer row, not an error, so one batch refused
-- never rolls back the others.
--
-- `batches` is a JSON array of {"s": stream, "k": key or null, "f": fingerprint,
-- "r": [[kind_name, kind_version, producer, to, idem, size, body], …]}. Streams are locked
-- in byte order ("C"), batches of one stream in the order given: two calls with streams in
-- common lock them in the same order, so they wait for each other instead of deadlocking.
-- `now_ms` is the caller's clock; `at` never goes below the stream's previous `at`.
-- Answers one row per batch, `out_idx` its index in `batches`: `landed` with the first
-- cursor and `at`; `replayed` with the key's records as JSON rows; `conflict`; `archived`.
CREATE FUNCTION log_append(batches jsonb, now_ms bigint, channel text)
RETURNS TABLE (out_idx integer, out_outcome text, out_first bigint, out_at bigint, out_replay json)
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
  held record;
BEGIN
  FOR s IN
    SELECT e.v->>'s' AS stream,
           array_agg(e.v ORDER BY e.ord) AS items,
           array_agg((e.ord - 1)::integer ORDER BY e.ord) AS idxs
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
      out_idx := s.idxs[j];
      out_first := NULL;
      out_at := NULL;
      out_replay := NULL;
      -- The key first: an identical resend replays even after archiving.
      IF v_key IS NOT NULL THEN
        SELECT i.fingerprint, i.first_cursor, i.last_cursor INTO held
        FROM idempotency i WHERE i.stream = s.stream AND i.key = v_key;
        IF FOUND THEN
          IF held.fingerprint <> b->>'f' THEN
            out_outcome := 'conflict';
          ELSE
            out_outcome := 'replayed';
            SELECT json_agg(r ORDER BY r.cursor) INTO out_replay FROM records r
            WHERE r.stream = s.stream AND r.cursor BETWEEN held.first_cursor AND held.last_cursor;
          END IF;
          RETURN NEXT;
          CONTINUE;
        END IF;
      END IF;
      IF v_final IS NOT NULL THEN
        out_outcome := 'archived';
        RETURN NEXT;
        CONTINUE;
      END IF;
      v_last_at := greatest(now_ms, v_last_at);
      INSERT INTO records (stream, cursor, at, kind_name, kind_version, producer, addressed_to,
                           idem, size, body)
      SELECT s.stream, v_head + x.ord, v_last_at, x.v->>0, (x.v->>1)::integer, x.v->>2,
             x.v->>3, x.v->>4, (x.v->>5)::integer, x.v->>6
      FROM jsonb_array_elements(b->'r') WITH ORDINALITY AS x(v, ord);
      GET DIAGNOSTICS v_count = ROW_COUNT;
      IF v_key IS NOT NULL THEN
        INSERT INTO idempotency (stream, key, fingerprint, first_cursor, last_cursor)
        VALUES (s.stream, v_key, b->>'f', v_head + 1, v_head + v_count);
      END IF;
      out_outcome := 'landed';
      out_first := v_head + 1;
      out_at := v_last_at;
      v_head := v_head + v_count;
      RETURN NEXT;
    END LOOP;
    -- One head move and one notification per stream, however many batches landed on it.
    IF v_head > v_start THEN
      UPDATE streams SET head = v_head, last_at = v_last_at WHERE stream = s.stream;
      PERFORM pg_notify(channel, v_head || ' ' || s.stream);
    END IF;
  END LOOP;
END
$$;
