-- name: retention_prune_issues
-- One batch: transcripts, history and bundles of closed issues past the cutoff with no order in flight.
WITH due AS (
    SELECT i.number FROM hive.queen_issue i
    WHERE i.state = 'closed' AND i.closed_at <= %(cutoff)s
      AND NOT EXISTS (
          SELECT 1 FROM hive.queen_dispatch d
          WHERE d.issue = i.number AND d.finished_at IS NULL)
      AND (EXISTS (SELECT 1 FROM hive.queen_transcript t WHERE t.issue = i.number)
           OR EXISTS (SELECT 1 FROM hive.queen_dispatch_history h WHERE h.issue = i.number)
           OR EXISTS (SELECT 1 FROM hive.queen_bundle b WHERE b.issue = i.number))
    ORDER BY i.closed_at, i.number
    LIMIT %(batch_issues)s
), lines AS (
    DELETE FROM hive.queen_transcript
    WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM hive.queen_transcript
        WHERE issue IN (SELECT number FROM due) LIMIT %(batch_rows)s))
    RETURNING 1
), history AS (
    DELETE FROM hive.queen_dispatch_history
    WHERE id IN (
        SELECT id FROM hive.queen_dispatch_history
        WHERE issue IN (SELECT number FROM due) LIMIT %(batch_rows)s)
    RETURNING 1
), bundles AS (
    DELETE FROM hive.queen_bundle WHERE issue IN (SELECT number FROM due)
    RETURNING 1
)
SELECT (SELECT count(*) FROM due) AS issues,
       (SELECT count(*) FROM lines) AS transcript_lines,
       (SELECT count(*) FROM history) AS history_rows,
       (SELECT count(*) FROM bundles) AS bundles;

-- name: retention_prune_reports
-- One batch of round reports written at or before the cutoff, oldest first.
WITH gone AS (
    DELETE FROM hive.queen_report
    WHERE id IN (
        SELECT id FROM hive.queen_report WHERE at <= %(cutoff)s
        ORDER BY at, id LIMIT %(batch_rows)s)
    RETURNING 1
)
SELECT count(*) AS reports FROM gone;

-- name: retention_prune_checks
-- One batch of check runs of closed issues past the cutoff with no order in flight, oldest first; a live job's stay (`job_states`: those that may go).
WITH gone AS (
    DELETE FROM hive.queen_check
    WHERE id IN (
        SELECT c.id FROM hive.queen_check c
        JOIN hive.queen_issue i ON i.number = c.issue
        WHERE i.state = 'closed' AND i.closed_at <= %(cutoff)s
          AND NOT EXISTS (
              SELECT 1 FROM hive.queen_dispatch d
              WHERE d.issue = i.number AND d.finished_at IS NULL)
          AND (c.job IS NULL OR EXISTS (
              SELECT 1 FROM hive.queen_job j
              WHERE j.id = c.job AND j.state = ANY (%(job_states)s::text[])))
        ORDER BY c.id LIMIT %(batch_rows)s)
    RETURNING 1
)
SELECT count(*) AS check_runs FROM gone;

-- name: retention_prune_jobs
-- One batch of ended jobs of closed issues past the cutoff with no order in flight, with their effects and moved waits; a job a check run names, or that owns a waiting wait, stays.
WITH picked AS (
    SELECT j.id, 'job:' || j.id AS owner FROM hive.queen_job j
    JOIN hive.queen_issue i ON i.number = j.issue
    WHERE i.state = 'closed' AND i.closed_at <= %(cutoff)s
      AND NOT EXISTS (
          SELECT 1 FROM hive.queen_dispatch d
          WHERE d.issue = i.number AND d.finished_at IS NULL)
      AND j.state = ANY (%(job_states)s::text[])
      AND NOT EXISTS (SELECT 1 FROM hive.queen_check c WHERE c.job = j.id)
      AND NOT EXISTS (
          SELECT 1 FROM hive.queen_wait w
          WHERE w.owner = 'job:' || j.id AND w.state <> ALL (%(wait_states)s::smallint[]))
    ORDER BY j.id
    LIMIT %(batch_jobs)s
), effects AS (
    DELETE FROM hive.queen_effect WHERE job IN (SELECT id FROM picked)
    RETURNING 1
), waits AS (
    -- a wait names its job only in its owner, and none of a picked job is waiting; the
    -- job's wait_id is checked at the statement's end, when the job is gone too
    DELETE FROM hive.queen_wait WHERE owner IN (SELECT owner FROM picked)
    RETURNING 1
), jobs AS (
    DELETE FROM hive.queen_job WHERE id IN (SELECT id FROM picked)
    RETURNING 1
)
SELECT (SELECT count(*) FROM jobs) AS jobs,
       (SELECT count(*) FROM effects) AS effects,
       (SELECT count(*) FROM waits) AS waits;

-- name: retention_retired_issues
-- Of the given issues, those closed at or before the cutoff with no order in flight.
SELECT i.number FROM hive.queen_issue i
WHERE i.number = ANY (%(numbers)s) AND i.state = 'closed' AND i.closed_at <= %(cutoff)s
  AND NOT EXISTS (
      SELECT 1 FROM hive.queen_dispatch d WHERE d.issue = i.number AND d.finished_at IS NULL)
ORDER BY i.number;

-- name: retention_orders_in_flight
-- Of the given issues, those whose order is in flight, and those that have an order at all.
SELECT issue, finished_at IS NULL AS in_flight FROM hive.queen_dispatch
WHERE issue = ANY (%(numbers)s);
