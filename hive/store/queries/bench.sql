-- name: bench_fill_orders
-- Queue orders 1..count at once, all claimable, for the benchmarks (a scratch database only).
INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id, queued_at)
SELECT n, 'queen-' || n, 'main', true, gen_random_uuid(), now()
FROM generate_series(1, %(count)s) AS n;

-- name: bench_clear_orders
-- Empty the order tables between two runs of a benchmark (a scratch database only).
TRUNCATE hive.queen_dispatch, hive.queen_dispatch_history, hive.queen_bundle;

-- name: bench_publish_times
-- Each merged issue's moments from creation to merge (its turn's last line, its checks' and push's ends) and its attempt's check seconds, for `hive bench publish`.
SELECT i.number AS issue, d.attempt, i.created_at, d.queued_at, d.dispatched_at,
       d.finished_at, d.reviewed_at, d.merged_at,
       (SELECT max(t.at) FROM hive.queen_transcript t
         WHERE t.conversation_id = d.conversation_id) AS turn_last_line_at,
       (SELECT max(c.at) FROM hive.queen_check c
         WHERE c.issue = d.issue AND c.attempt = d.attempt) AS checked_at,
       (SELECT max(e.done_at) FROM hive.queen_effect e
         WHERE e.job = j.id AND starts_with(e.effect_key, 'push:')) AS pushed_at,
       (SELECT count(*) FROM hive.queen_check c
         WHERE c.issue = d.issue AND c.attempt = d.attempt) AS checks,
       (SELECT coalesce(sum(c.seconds), 0) FROM hive.queen_check c
         WHERE c.issue = d.issue AND c.attempt = d.attempt) AS check_seconds
FROM hive.queen_issue i
JOIN hive.queen_dispatch d ON d.issue = i.number
LEFT JOIN LATERAL (
    SELECT id FROM hive.queen_job
    WHERE kind = 'publish' AND issue = d.issue AND attempt = d.attempt
    ORDER BY id DESC LIMIT 1
) j ON true
WHERE d.merged_at IS NOT NULL
ORDER BY i.number;

-- name: bench_intake_order
-- An issue's creation and its order's queueing, in ms apart by the server's clock (no row: not queued yet), and whether the order ended, for `hive bench intake`.
SELECT extract(epoch FROM d.queued_at - i.created_at) * 1000.0 AS queued_ms,
       d.finished_at IS NOT NULL AS ended
FROM hive.queen_issue AS i
JOIN hive.queen_dispatch AS d ON d.issue = i.number
WHERE i.number = %(issue)s AND d.queued_at IS NOT NULL;

-- name: bench_claim_latencies
-- Every claimed order's claim latency in ms (claimed_at - queued_at, the server's clock), for `hive bench scale`.
SELECT extract(epoch FROM claimed_at - queued_at) * 1000.0 AS claim_ms
FROM hive.queen_dispatch
WHERE claimed_at IS NOT NULL AND queued_at IS NOT NULL;

-- name: bench_ended_orders
-- How many orders have ended, for the benchmarks.
SELECT count(*) FROM hive.queen_dispatch WHERE finished_at IS NOT NULL;

-- name: bench_client_backends
-- How many client connections the server holds now (pg_stat_activity's client backends), for `hive bench scale`.
SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE backend_type = 'client backend';
