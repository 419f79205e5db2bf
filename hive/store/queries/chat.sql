-- name: chat_owe
-- Owe one bot message for its cause (nothing when the cause owes one already); its id, or no row.
INSERT INTO hive.chat_outbox
    (cause, bot, kind, depth, issue, reply_to, thread_root, asked, body, asked_at)
VALUES (%(cause)s, %(bot)s, %(message_kind)s, %(depth)s, %(issue)s, %(reply_to)s, %(thread_root)s,
    %(asked)s, %(body)s, %(asked_at)s)
ON CONFLICT (cause) DO NOTHING
RETURNING id;

-- name: chat_waiting
-- The rows ready to send (composed, neither sent nor dropped), with the store's time in epoch seconds.
SELECT id, cause, bot, kind, depth, issue, reply_to, thread_root, asked, body,
    extract(epoch FROM created_at)::float8 AS since,
    extract(epoch FROM now())::float8 AS now
FROM hive.chat_outbox
WHERE sent_at IS NULL AND dropped_at IS NULL AND body IS NOT NULL
ORDER BY id
LIMIT %(limit)s;

-- name: chat_sends_since
-- The bot messages sent in the last `seconds` (the clocks' memory), in epoch seconds.
SELECT bot, extract(epoch FROM sent_at)::float8 AS at
FROM hive.chat_outbox
WHERE sent_at > now() - make_interval(secs => %(seconds)s)
ORDER BY sent_at;

-- name: chat_sent
-- Mark a row sent as the Matrix event it became, with the seconds from the person's message to now (NULL: no person asked).
UPDATE hive.chat_outbox SET sent_at = now(), event_id = %(event_id)s
WHERE id = %(row_id)s AND sent_at IS NULL
RETURNING extract(epoch FROM now() - asked_at)::float8 AS answer_seconds;

-- name: chat_drop
-- Drop a row the clocks held past its bound, or one that cannot be sent, with its reason.
UPDATE hive.chat_outbox SET dropped_at = now(), dropped_reason = %(reason)s
WHERE id = %(row_id)s AND sent_at IS NULL AND dropped_at IS NULL
RETURNING id;

-- name: chat_cursor
-- The room's sync token and since when moves are posted (a row made at the first look).
INSERT INTO hive.chat_cursor AS c (room) VALUES (%(room)s)
ON CONFLICT (room) DO UPDATE SET room = c.room
RETURNING next_batch, moves_since;

-- name: chat_set_token
-- Keep the room's sync token once what it read is in the outbox.
UPDATE hive.chat_cursor SET next_batch = %(next_batch)s, updated_at = now()
WHERE room = %(room)s
RETURNING room;

-- name: chat_set_moves_since
-- Keep the time up to which the moves are posted.
UPDATE hive.chat_cursor SET moves_since = %(moves_since)s, updated_at = now()
WHERE room = %(room)s
RETURNING room;

-- name: chat_rows
-- A room's rows for a person or a test: each owed message and where it stands, oldest first.
SELECT id, cause, bot, kind, depth, issue, body, event_id,
    sent_at IS NOT NULL AS sent, dropped_reason
FROM hive.chat_outbox
ORDER BY id;

-- name: chat_moves
-- The moves a team wants to see since a time, oldest first: merges, send-backs and escalations with their notes, keys put to rest.
SELECT * FROM (
    SELECT 'merged' AS move, d.issue, NULL::integer AS key_index, d.attempt,
        d.merged_sha AS detail, NULL::timestamptz AS until, d.merged_at AS at
    FROM hive.queen_dispatch AS d
    WHERE d.merged_at >= %(since)s
    UNION ALL
    SELECT d.review_state, d.issue, NULL, d.attempt, d.review_note, NULL, d.reviewed_at
    FROM hive.queen_dispatch AS d
    WHERE d.reviewed_at >= %(since)s AND d.review_state IN ('sendback', 'escalate')
    UNION ALL
    SELECT 'rest', NULL, r.key_index, r.strikes, r.reason, r.rests_until, r.updated_at
    FROM hive.queen_key_rest AS r
    WHERE r.updated_at >= %(since)s AND r.rests_until > now()
) AS m
ORDER BY at
LIMIT %(limit)s;
