-- name: bench_fill_orders
-- Queue orders 1..count at once, all claimable, for the benchmarks (a scratch database only).
INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id, queued_at)
SELECT n, 'queen-' || n, 'main', true, gen_random_uuid(), now()
FROM generate_series(1, %(count)s) AS n;

-- name: bench_clear_orders
-- Empty the order tables between two runs of a benchmark (a scratch database only).
TRUNCATE hive.queen_dispatch, hive.queen_dispatch_history, hive.queen_bundle;
