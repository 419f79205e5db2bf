-- name: chat_owe
-- Owe one bot message for its cause (nothing when the cause owes one already); its id, or no row.
INSERT INTO hive.chat_outbox
    (cause, bot, kind, depth, issue, reply_to, thread_root, asked, body, asked_at)
VALUES (%(cause)s, %(bot)s, %(message_kind)s, %(depth)s, %(issue)s, %(reply_to)s, %(thread_root)s,
    %(asked)s, %(body)s, %(asked_at)s)
ON CONFLICT (cause) DO NOTHING
RETURNING id;

-- name: chat_waiting
-- The rows ready to send (composed, neither sent nor dropped), with the store's time in epoch seconds; a bee's answer waits from when its turn composed it.
SELECT id, cause, bot, kind, depth, issue, reply_to, thread_root, asked, body,
    extract(epoch FROM COALESCE(composed_at, created_at))::float8 AS since,
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

-- name: chat_turn_claim
-- Claim the oldest bee's answer still owed whose turn no process holds (none claimed, or a claim run out), for `hold_seconds`; it counts one more try. With the issue's title (NULL: no such issue) and its order's key.
UPDATE hive.chat_outbox AS o
SET turn_by = %(by)s, turn_until = now() + make_interval(secs => %(hold_seconds)s),
    turn_tries = o.turn_tries + 1
WHERE o.id = (
    SELECT id FROM hive.chat_outbox
    WHERE body IS NULL AND dropped_at IS NULL AND (turn_until IS NULL OR turn_until < now())
    ORDER BY id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING o.id, o.bot, o.issue, o.asked, o.turn_tries AS tries,
    (SELECT i.title FROM hive.queen_issue AS i WHERE i.number = o.issue) AS title,
    (SELECT d.key_index FROM hive.queen_dispatch AS d WHERE d.issue = o.issue) AS key_index;

-- name: chat_turn_answer
-- Write a claimed turn's answer as its row's body, only while this claim (`by`, `tries`) holds it; its id, or no row.
UPDATE hive.chat_outbox
SET body = %(body)s, composed_at = now(), turn_until = NULL
WHERE id = %(row_id)s AND body IS NULL AND dropped_at IS NULL
    AND turn_by = %(by)s AND turn_tries = %(tries)s
RETURNING id;

-- name: chat_turn_spend
-- Add what one turn of a row spent (its tokens and cost; a cost the store does not know adds nothing), whoever holds the row now.
UPDATE hive.chat_outbox SET
    turn_key_index = COALESCE(%(key_index)s, turn_key_index),
    turn_input_tokens = COALESCE(turn_input_tokens, 0) + %(input_tokens)s::bigint,
    turn_output_tokens = COALESCE(turn_output_tokens, 0) + %(output_tokens)s::bigint,
    turn_cost_usd = CASE WHEN %(cost_usd)s::double precision IS NULL THEN turn_cost_usd
        ELSE COALESCE(turn_cost_usd, 0) + %(cost_usd)s::double precision END,
    turn_ended_at = now()
WHERE id = %(row_id)s
RETURNING id;

-- name: chat_turn_let_go
-- Let go of a claimed turn a stopping process cut (another process claims it at once: the trigger NOTIFYs hive_chat).
UPDATE hive.chat_outbox SET turn_until = NULL
WHERE id = %(row_id)s AND body IS NULL AND turn_by = %(by)s AND turn_tries = %(tries)s
    AND turn_until IS NOT NULL
RETURNING id;

-- name: chat_turns_let_go_mine
-- At its start, a process lets go of the turns its earlier life held and never answered (it died with them); how many.
UPDATE hive.chat_outbox SET turn_until = NULL
WHERE turn_by = %(by)s AND body IS NULL AND dropped_at IS NULL AND turn_until IS NOT NULL
RETURNING id;

-- name: listen_chat
-- Subscribe this connection to hive_chat, the hint that a bee's answer is owed (or was let go).
LISTEN hive_chat;

-- name: unlisten_chat
-- Unsubscribe this connection from hive_chat (no loop of the process listens for it any more).
UNLISTEN hive_chat;

-- name: chat_turns_unclaimed
-- The bees' answers owed longer than `seconds` that no process ever claimed (none runs turns), oldest first.
SELECT id, issue FROM hive.chat_outbox
WHERE body IS NULL AND dropped_at IS NULL AND turn_tries = 0
    AND created_at < now() - make_interval(secs => %(seconds)s)
ORDER BY id
LIMIT 100;

-- name: chat_turn_answer_unclaimed
-- Answer an owed turn no process claimed with its sentence, unless one claimed it meanwhile; its id, or no row.
UPDATE hive.chat_outbox SET body = %(body)s, composed_at = now()
WHERE id = %(row_id)s AND body IS NULL AND dropped_at IS NULL AND turn_tries = 0
RETURNING id;
