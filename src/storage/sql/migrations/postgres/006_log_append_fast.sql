-- `log_append` (migration 003) again, with the same arguments, answers and locking
-- order, doing less on the server for each stream of a call:
-- - A stream whose batches carry no idempotency key (a plain writer of the log; the
--   service keys every batch it lands) is locked, checked for archiving and moved to its
--   new head by one UPDATE; then its records are inserted. Where 003 ran a SELECT … FOR UPDATE (which writes the row's lock to the
--   WAL), the INSERT and a second UPDATE. A stream with a key among its batches, a new
--   stream and an archived one (the UPDATE finds no row it may move) go the way 003 did.
--   A concurrent archive is seen either way: the UPDATE waits for the row, then
--   re-checks `final_cursor` on the version the archive committed.
-- - The notification is built from what the caller sent, not read back from `records`:
--   `{"h": head, "s": stream, "a": at, "r": [[kind_name, kind_version, producer, to,
--   idem, size, body], …]}`, the landed records in cursor order ending at `head`, in the
--   tuples the caller gave. All the batches of a stream landed by one call share one `at`
--   (`greatest(now_ms, last_at)`) and run on from one cursor, so those are all a reader
--   needs. The listener (`signals.ts`) reads the stream's name before the records, and a
--   process that follows no tail of the stream parses no more. Too big for one
--   notification (8000 bytes), it names the head instead, as before: `'<head> <stream>'`.
CREATE OR REPLACE PROCEDURE log_append(batches jsonb, now_ms bigint, channel text, INOUT answers json DEFAULT NULL)
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
  v_rows jsonb;
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
           array_agg(e.ord::integer ORDER BY e.ord) AS idxs,
           bool_and(e.v->>'k' IS NULL) AS unkeyed,
           sum(jsonb_array_length(e.v->'r'))::bigint AS total
    FROM jsonb_array_elements(batches) WITH ORDINALITY AS e(v, ord)
    GROUP BY e.v->>'s'
    ORDER BY (e.v->>'s') COLLATE "C"
  LOOP
    v_rows := '[]';
    v_start := NULL;
    IF s.unkeyed THEN
      UPDATE streams t SET head = t.head + s.total, last_at = greatest(now_ms, t.last_at)
      WHERE t.stream = s.stream AND t.final_cursor IS NULL
      RETURNING t.head - s.total, t.last_at INTO v_start, v_last_at;
    END IF;
    IF v_start IS NOT NULL THEN
      -- Every batch lands: the head already stands past them all.
      v_head := v_start;
      FOR j IN 1 .. array_length(s.items, 1) LOOP
        b := s.items[j];
        INSERT INTO records (stream, cursor, at, kind_name, kind_version, producer,
                             addressed_to, idem, size, body)
        SELECT s.stream, v_head + x.ord, v_last_at, x.v->>0, (x.v->>1)::integer, x.v->>2,
               x.v->>3, x.v->>4, (x.v->>5)::integer, x.v->>6
        FROM jsonb_array_elements(b->'r') WITH ORDINALITY AS x(v, ord);
        v_answers[s.idxs[j]] := jsonb_build_object('o', 'landed', 'c', v_head + 1, 'a', v_last_at);
        v_head := v_head + jsonb_array_length(b->'r');
        v_rows := v_rows || (b->'r');
      END LOOP;
    ELSE
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
          v_rows := v_rows || (b->'r');
        END IF;
        v_answers[s.idxs[j]] := v_answer;
      END LOOP;
      IF v_head > v_start THEN
        UPDATE streams SET head = v_head, last_at = v_last_at WHERE stream = s.stream;
      END IF;
    END IF;
    -- One notification per stream, however many batches landed on it.
    IF v_head > v_start THEN
      v_payload := json_build_object('h', v_head, 's', s.stream, 'a', v_last_at, 'r', v_rows)::text;
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
