-- name: forge_note
-- The forge's note of a kind on a subject, if it made one.
SELECT remote_id, body FROM hive.forge_note WHERE subject = %(subject)s AND kind = %(kind)s;

-- name: put_forge_note
-- Record (or update) the forge's note of a kind on a subject.
INSERT INTO hive.forge_note (subject, kind, remote_id, body)
VALUES (%(subject)s, %(kind)s, %(remote_id)s, %(body)s)
ON CONFLICT (subject, kind) DO UPDATE SET
    remote_id = excluded.remote_id, body = excluded.body, updated_at = now()
RETURNING subject;

-- name: drop_forge_note
-- Forget the forge's note of a kind on a subject (an issue it opened was closed).
DELETE FROM hive.forge_note WHERE subject = %(subject)s AND kind = %(kind)s RETURNING subject;

-- name: forge_notes_of_kind
-- Every note of a kind the forge keeps, by subject (the issues open about checks red on the base).
SELECT subject, remote_id, body FROM hive.forge_note WHERE kind = %(kind)s ORDER BY subject;

-- name: forge_merged_unclosed
-- Labelled issues whose merge has no close note for its sha yet (subject as watch.subject), newest merge first, a batch.
SELECT i.number AS issue, d.merged_sha
FROM hive.queen_issue i JOIN hive.queen_dispatch d ON d.issue = i.number
WHERE i.state = 'closed' AND d.merged_sha IS NOT NULL AND i.labels && %(labels)s
  AND i.origin IS DISTINCT FROM 'hive'
  AND NOT EXISTS (
      SELECT 1 FROM hive.forge_note n
      WHERE n.subject = 'issue:' || i.number AND n.kind = %(kind)s AND n.body = d.merged_sha)
ORDER BY d.merged_at DESC, i.number LIMIT %(limit)s;

-- name: forge_watch_facts
-- The open issues (not the hive's own) and their order's state, for the night watch.
SELECT i.number AS issue, i.state, d.attempt, d.review_note,
       hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state) AS order_state
FROM hive.queen_issue i LEFT JOIN hive.queen_dispatch d ON d.issue = i.number
WHERE i.state = 'open' AND i.origin IS DISTINCT FROM 'hive' ORDER BY i.number;

-- name: forge_delivery_seen
-- Whether a webhook delivery (X-GitHub-Delivery) was handled already.
SELECT id FROM hive.forge_delivery WHERE id = %(delivery_id)s;

-- name: record_forge_delivery
-- Record a handled webhook delivery, and forget those older than the days kept.
WITH gone AS (
    DELETE FROM hive.forge_delivery
    WHERE received_at < now() - make_interval(days => %(keep_days)s)
)
INSERT INTO hive.forge_delivery (id) VALUES (%(delivery_id)s)
ON CONFLICT (id) DO NOTHING
RETURNING id;
