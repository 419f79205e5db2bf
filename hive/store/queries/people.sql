-- name: person_facts
-- An issue and its current order as a person's verb sees them: the order's state (NULL: no order), its attempt and what was decided about its work.
SELECT i.number, i.title, i.state AS issue_state, i.criteria, i.blocked_by,
    i.closed_reason, i.closed_code, i.closed_at,
    i.created_at, i.updated_at,
    d.conversation_id, d.attempt, d.detail, d.queued_at, d.claimed_by, d.dispatched_at,
    d.finished_at, d.outcome, d.review_state, d.review_note, d.reviewed_at, d.sendbacks,
    d.failures_in_a_row, d.approved_at, d.approved_by, d.merged_sha, d.merged_at,
    CASE WHEN d.issue IS NOT NULL
        THEN hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state)
    END AS order_state
FROM hive.queen_issue AS i
LEFT JOIN hive.queen_dispatch AS d ON d.issue = i.number
WHERE i.number = %(issue)s;

-- name: reject_order
-- A person sends this attempt's work back (or escalates it at the send-back ceiling) with their note, only from a state the event may leave and never once merged.
UPDATE hive.queen_dispatch SET
    review_state = %(review_state)s, review_note = %(note)s, reviewed_at = now(),
    review_pause_seconds = 0,
    sendbacks = sendbacks + CASE WHEN %(review_state)s = 'sendback' THEN 1 ELSE 0 END
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s AND merged_sha IS NULL
  AND hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(from_states)s)
RETURNING issue;

-- name: cancel_order
-- A person ends this attempt in flight as `cancelled`; the runner's heartbeat (fenced on finished_at IS NULL) then finds its row gone and stops the turn.
UPDATE hive.queen_dispatch SET finished_at = now(), outcome = 'cancelled', outcome_code = 'cancelled',
    detail = %(detail)s
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
  AND hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(from_states)s)
RETURNING issue;

-- name: criteria_changed
-- The issue's criteria changed under judged work: the attempt goes stale (dispatched again) and its review note, which judged the old criteria, is cleared; only from a state the event may leave.
UPDATE hive.queen_dispatch SET
    review_state = 'stale', review_note = NULL, reviewed_at = now(), review_pause_seconds = 0
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
  AND hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(from_states)s)
RETURNING issue;

-- name: close_issue
-- Close an open issue by hand with its reason (no row: unknown or closed already).
UPDATE hive.queen_issue SET state = 'closed', closed_reason = %(reason)s,
    closed_code = 'by_hand', closed_at = now(), updated_at = now()
WHERE number = %(issue)s AND state = 'open'
RETURNING number;

-- name: reopen_issue
-- Open a closed issue again, clearing why and when it closed (no row: unknown or open already); the trigger NOTIFYs hive_issues.
UPDATE hive.queen_issue SET state = 'open', closed_reason = NULL, closed_code = NULL,
    closed_at = NULL, updated_at = now()
WHERE number = %(issue)s AND state = 'closed'
RETURNING number;

-- name: edit_issue
-- Replace the fields given (NULL keeps a field) of an issue; the trigger NOTIFYs hive_issues when one changed (a new boundary may let it go).
UPDATE hive.queen_issue SET
    title = COALESCE(%(title)s::text, title),
    body = COALESCE(%(body)s::text, body),
    labels = COALESCE(%(labels)s::text[], labels),
    boundary = COALESCE(%(boundary)s::text[], boundary),
    criteria = COALESCE(%(criteria)s::jsonb, criteria),
    updated_at = now()
WHERE number = %(issue)s
RETURNING number;

-- name: block_issue
-- Add a blocker to an issue's blocked_by (once).
UPDATE hive.queen_issue SET blocked_by = array_append(blocked_by, %(blocker)s::integer),
    updated_at = now()
WHERE number = %(issue)s AND NOT (%(blocker)s::integer = ANY (blocked_by))
RETURNING number;

-- name: blocker_path
-- The path of numbers by which one issue waits on another through blocked_by (directly or through others), or nothing: adding the reverse edge would close a cycle.
WITH RECURSIVE chain (number, path) AS (
    SELECT b, ARRAY[%(start)s::integer, b]
    FROM hive.queen_issue AS i, unnest(i.blocked_by) AS b
    WHERE i.number = %(start)s
    UNION ALL
    SELECT b, c.path || b
    FROM chain AS c
    JOIN hive.queen_issue AS i ON i.number = c.number, unnest(i.blocked_by) AS b
    WHERE NOT b = ANY (c.path) AND cardinality(c.path) < %(max_depth)s
)
SELECT path FROM chain WHERE number = %(target)s LIMIT 1;

-- name: reports_naming_issue
-- The Queen's round reports of the last days whose headline or body names #N, newest first.
SELECT id, at, headline, body FROM hive.queen_report
WHERE at >= now() - make_interval(days => %(days)s)
  AND (headline ~ %(pattern)s OR body ~ %(pattern)s)
ORDER BY at DESC, id DESC
LIMIT %(limit)s;

-- name: attempts_of_issue
-- Every attempt of an issue as its whole row in JSON: the current one and the archived ones.
SELECT to_jsonb(d) AS attempt FROM hive.queen_dispatch AS d WHERE d.issue = %(issue)s
UNION ALL
SELECT snapshot FROM hive.queen_dispatch_history WHERE issue = %(issue)s;

-- name: jobs_of_issue
-- Every job of an issue, newest first, with its step and last sentence.
SELECT id, kind, attempt, step, state, detail, created_at, updated_at, finished_at
FROM hive.queen_job WHERE issue = %(issue)s
ORDER BY updated_at DESC, id DESC
LIMIT %(limit)s;

-- name: transcript_of_issue
-- An issue's transcript lines not yet seen (per conversation, the last seq seen), oldest first, a page at a time.
SELECT t.conversation_id, t.seq, t.issue, t.at, t.kind, t.text
FROM hive.queen_transcript AS t
LEFT JOIN unnest(%(conversations)s::uuid[], %(seqs)s::integer[]) AS seen (conversation_id, seq)
    ON seen.conversation_id = t.conversation_id
WHERE t.issue = %(issue)s AND t.seq > COALESCE(seen.seq, 0)
ORDER BY t.at, t.conversation_id, t.seq
LIMIT %(limit)s;
