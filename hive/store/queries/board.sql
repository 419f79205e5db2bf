-- name: listen_board
-- Subscribe this connection to hive_board, the hint that something a board card or an issue's page shows changed.
LISTEN hive_board;

-- name: unlisten_board
-- Unsubscribe this connection from hive_board (no board of the process listens any more).
UNLISTEN hive_board;

-- name: board_watch
-- Say a board listens here until the given seconds from now (the triggers on the board's tables notify only while some board does).
INSERT INTO hive.queen_board_watch (holder, expires_at)
VALUES (%(holder)s, now() + make_interval(secs => %(ttl_seconds)s::float8))
ON CONFLICT (holder) DO UPDATE SET expires_at = EXCLUDED.expires_at
RETURNING holder;

-- name: board_unwatch
-- Say this board listens no more (and drop the rows of boards long gone).
DELETE FROM hive.queen_board_watch
WHERE holder = %(holder)s OR expires_at < now() - interval '1 day'
RETURNING holder;

-- name: board_cards
-- The board's cards: every open issue and the latest closed ones (or the issues named and those they block), each with its current order, its open blockers and the newest transcript line of an order in flight.
SELECT i.number, i.title, i.state AS issue_state, i.labels, i.created_at, i.closed_at,
    i.closed_reason,
    ARRAY(
        SELECT b.number FROM hive.queen_issue AS b
        WHERE b.number = ANY (i.blocked_by) AND b.state = 'open' ORDER BY b.number
    ) AS open_blockers,
    d.attempt, d.claimed_by, d.queued_at, d.key_index, d.created_at AS ordered_at,
    d.dispatched_at, d.finished_at, d.outcome, d.detail, d.review_state, d.reviewed_at,
    d.approved_at, d.merged_sha, d.merged_at,
    CASE WHEN d.issue IS NOT NULL
        THEN hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state)
    END AS order_state,
    t.at AS said_at, t.text AS said
FROM hive.queen_issue AS i
LEFT JOIN hive.queen_dispatch AS d ON d.issue = i.number
LEFT JOIN LATERAL (
    SELECT tr.at, left(tr.text, %(said_max_chars)s) AS text FROM hive.queen_transcript AS tr
    WHERE tr.conversation_id = d.conversation_id AND d.finished_at IS NULL
    ORDER BY tr.seq DESC LIMIT 1
) AS t ON true
WHERE CASE WHEN %(issues)s::integer[] IS NULL
    THEN i.state = 'open' OR i.number IN (
        SELECT c.number FROM hive.queen_issue AS c WHERE c.state = 'closed'
        ORDER BY c.closed_at DESC NULLS LAST, c.number DESC LIMIT %(closed_max)s)
    ELSE i.number = ANY (%(issues)s::integer[]) OR i.blocked_by && %(issues)s::integer[]
END
ORDER BY i.number;

-- name: board_closed_count
-- How many issues are closed (the board shows the latest few).
SELECT count(*) AS closed FROM hive.queen_issue WHERE state = 'closed';

-- name: board_bundle_of_issue
-- The stored bundle of an issue, without its bytes (the issue's page links to the download).
SELECT issue, head_sha, size, runner, created_at FROM hive.queen_bundle WHERE issue = %(issue)s;

-- name: board_transcript_tail
-- The newest lines of an issue's transcript, oldest first, each with the last seq of every conversation of the issue (read in the same statement, so following on from them misses nothing).
WITH marks AS (
    SELECT jsonb_object_agg(m.conversation_id::text, m.seq) AS marks
    FROM (
        SELECT conversation_id, max(seq) AS seq FROM hive.queen_transcript
        WHERE issue = %(issue)s GROUP BY conversation_id
    ) AS m
), tail AS (
    SELECT conversation_id, seq, issue, at, kind, text FROM hive.queen_transcript
    WHERE issue = %(issue)s
    ORDER BY at DESC, conversation_id DESC, seq DESC
    LIMIT %(limit)s
)
SELECT tail.conversation_id, tail.seq, tail.issue, tail.at, tail.kind, tail.text, marks.marks
FROM marks LEFT JOIN tail ON true
ORDER BY tail.at, tail.conversation_id, tail.seq;

-- name: board_merged_since
-- How many issues' work was merged at or after a time (the board's throughput).
SELECT count(*) AS merged FROM hive.queen_dispatch WHERE merged_at >= %(since)s;
