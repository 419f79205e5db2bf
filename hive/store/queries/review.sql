-- name: review_rows
-- Finished work that waits for review (ENDED or WAIT) whose pause has passed, with its issue's criteria and its bundle's head; never-visited and longest-unvisited first.
SELECT d.issue, d.conversation_id, d.attempt, d.branch, d.base, d.base_sha, d.owned_paths,
    d.salvaged_files, d.sendbacks, d.review_visits, d.review_pause_seconds, d.queued_at,
    d.review_failures, d.key_index, d.brief, i.title, i.body, i.criteria, b.head_sha,
    extract(epoch FROM d.reviewed_at)::bigint AS last_visit_at
FROM hive.queen_dispatch AS d
JOIN hive.queen_issue AS i ON i.number = d.issue
LEFT JOIN hive.queen_bundle AS b ON b.issue = d.issue
WHERE hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state) IN (3, 4)
  AND i.state = 'open'
  AND (d.reviewed_at IS NULL
       OR d.reviewed_at + make_interval(secs => d.review_pause_seconds) <= now())
ORDER BY d.reviewed_at NULLS FIRST, d.issue;

-- name: write_verdict
-- Record a review's verdict on this attempt, only from a state the verdict's event may leave (RULES 4); a send-back counts one more send-back; `failures` is the reviews in a row that gave no verdict (0 after a verdict).
UPDATE hive.queen_dispatch SET
    review_state = %(review_state)s, review_note = %(note)s, reviewed_at = now(),
    review_pause_seconds = %(pause_seconds)s, review_visits = review_visits + 1,
    review_failures = %(failures)s,
    sendbacks = sendbacks + CASE WHEN %(review_state)s = 'sendback' THEN 1 ELSE 0 END
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
  AND hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(from_states)s)
RETURNING issue;

-- name: order_state_now
-- This attempt's state as the row says it now (no row: the attempt is not the current one).
SELECT hive.order_state(started, finished_at, outcome_code, review_state) AS state
FROM hive.queen_dispatch
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s;

-- name: order_state_sql
-- The SQL twin of hive.rules.lifecycle.state_of, for the test that keeps them equal.
SELECT hive.order_state(%(started)s, %(finished_at)s, %(outcome_code)s::hive.outcome_code, %(review_state)s) AS state;
