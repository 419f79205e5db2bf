-- name: publish_facts
-- What a publish step needs about an accepted attempt: its state, its bundle's head, its criteria-free facts, its approval and the issue's age.
SELECT d.issue, d.conversation_id, d.attempt, d.base, d.base_sha, d.sendbacks, d.approved_at,
    d.merged_sha, hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state) AS state,
    b.head_sha, i.title, i.state AS issue_state, i.created_at AS issue_created_at
FROM hive.queen_dispatch AS d
JOIN hive.queen_issue AS i ON i.number = d.issue
LEFT JOIN hive.queen_bundle AS b ON b.issue = d.issue
WHERE d.issue = %(issue)s;

-- name: record_check
-- One check's run on a merge result, for the gate and for people (`inherited`: red on the base too).
INSERT INTO hive.queen_check
    (issue, attempt, job, name, result, exit_code, seconds, output_tail, merge_sha, inherited)
VALUES (%(issue)s, %(attempt)s, %(check_job)s, %(name)s, %(check_result)s, %(exit_code)s, %(seconds)s,
    right(%(output_tail)s, 4000), %(merge_sha)s, %(inherited)s::boolean)
RETURNING id;

-- name: checks_on
-- The latest run of each check on this merge result of this attempt.
SELECT DISTINCT ON (name) name, result, exit_code, seconds, output_tail, merge_sha, at,
    inherited
FROM hive.queen_check
WHERE issue = %(issue)s AND attempt = %(attempt)s AND merge_sha = %(merge_sha)s
ORDER BY name, at DESC, id DESC;

-- name: checks_of_issue
-- Every check run of an issue, newest first (for people: hive why, the API).
SELECT attempt, name, result, exit_code, seconds, output_tail, merge_sha, at, inherited
FROM hive.queen_check WHERE issue = %(issue)s ORDER BY at DESC, id DESC LIMIT %(limit)s;

-- name: ci_red
-- Accepted work whose check (or merge) went red: sent back with the output tail, or escalated at the ceiling, only from a state the event may leave.
UPDATE hive.queen_dispatch SET
    review_state = %(review_state)s, review_note = %(note)s, reviewed_at = now(),
    review_pause_seconds = 0,
    sendbacks = sendbacks + CASE WHEN %(review_state)s = 'sendback' THEN 1 ELSE 0 END
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
  AND hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(from_states)s)
RETURNING issue;

-- name: close_merged
-- The accepted attempt's work is on the base: record the merge on the order and close its issue naming the sha, in one statement.
WITH merged AS (
    UPDATE hive.queen_dispatch SET merged_sha = %(merge_sha)s, merged_at = now()
    WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
      AND hive.order_state(started, finished_at, outcome_code, review_state) = 5
    RETURNING issue
)
UPDATE hive.queen_issue AS i SET state = 'closed', closed_at = now(), updated_at = now(),
    closed_reason = 'merged as ' || %(merge_sha)s::text, closed_code = 'merged'
FROM merged WHERE i.number = merged.issue
RETURNING i.number, extract(epoch FROM now() - i.created_at)::double precision AS age_seconds;

-- name: pushed_sha
-- The sha this job's last done push effect landed (its key is push:<sha>).
SELECT substr(effect_key, 6) AS sha FROM hive.queen_effect
WHERE job = %(job)s AND done AND starts_with(effect_key, 'push:')
ORDER BY done_at DESC LIMIT 1;

-- name: approve_order
-- A person opens the merge gate of accepted work (zero checks never open it alone): only an accepted current attempt, once.
UPDATE hive.queen_dispatch SET approved_at = now(), approved_by = %(by)s
WHERE issue = %(issue)s AND approved_at IS NULL
  AND hive.order_state(started, finished_at, outcome_code, review_state) = 5
RETURNING issue, attempt;

-- name: accepted_without_job
-- Accepted current attempts of open issues, not merged, with no publish job of that attempt in any state, accepted more than %(older_than_seconds)s ago: the verdict landed but the job it leads to did not (the process or the store went between the two writes).
SELECT d.issue, d.attempt FROM hive.queen_dispatch AS d
JOIN hive.queen_issue AS i ON i.number = d.issue
WHERE hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state) = 5
  AND d.merged_sha IS NULL AND i.state = 'open'
  AND d.reviewed_at < now() - make_interval(secs => %(older_than_seconds)s::float8)
  AND NOT EXISTS (
      SELECT 1 FROM hive.queen_job AS j
      WHERE j.kind = 'publish' AND j.issue = d.issue AND j.attempt = d.attempt
  )
ORDER BY d.issue;
