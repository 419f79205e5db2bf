-- name: add_wait
-- A new waiting row for its owner: a key, a wake time `wake_in_seconds` from now, or both.
INSERT INTO hive.queen_wait (owner, key, wake_at, payload)
VALUES (%(owner)s, %(wait_key)s::text,
    now() + make_interval(secs => %(wake_in_seconds)s::float8), %(payload)s::jsonb)
RETURNING *;

-- name: resolve_waits
-- Resolve every waiting row with this key (first resolution wins: a moved row is never moved again), wake the jobs parked on them, NOTIFY hive_waits and hive_jobs; only the rows this statement moved come back.
WITH moved AS (
    UPDATE hive.queen_wait
    SET state = 1, resolved_at = now()
    WHERE key = %(wait_key)s AND state = 0
    RETURNING *
), woken AS (
    UPDATE hive.queen_job AS j
    SET state = 'ready', claimed_by = NULL, claim_due_at = NULL, updated_at = now()
    FROM moved WHERE j.wait_id = moved.id AND j.state = 'parked'
    RETURNING j.id, j.wait_id
), notified AS (
    SELECT pg_notify('hive_waits', moved.id::text) FROM moved
    UNION ALL
    SELECT pg_notify('hive_jobs', woken.id::text) FROM woken
)
SELECT moved.*, (SELECT count(*) FROM notified) AS notified,
    (SELECT min(woken.id) FROM woken WHERE woken.wait_id = moved.id) AS woke_job
FROM moved;

-- name: expire_due_waits
-- Expire up to `batch` waiting rows whose wake time came and whose claim (if any) ran out (SKIP LOCKED), waking their jobs; NOTIFY as a resolution does.
WITH moved AS (
    UPDATE hive.queen_wait AS w
    SET state = 2, resolved_at = now()
    WHERE w.state = 0 AND w.id = ANY (ARRAY(
        SELECT c.id FROM hive.queen_wait AS c
        WHERE c.state = 0 AND c.wake_at <= now()
          AND (c.claim_due_at IS NULL OR c.claim_due_at <= now())
        ORDER BY c.wake_at, c.id
        LIMIT %(batch)s
        FOR UPDATE SKIP LOCKED
    ))
    RETURNING w.*
), woken AS (
    UPDATE hive.queen_job AS j
    SET state = 'ready', claimed_by = NULL, claim_due_at = NULL, updated_at = now()
    FROM moved WHERE j.wait_id = moved.id AND j.state = 'parked'
    RETURNING j.id, j.wait_id
), notified AS (
    SELECT pg_notify('hive_waits', moved.id::text) FROM moved
    UNION ALL
    SELECT pg_notify('hive_jobs', woken.id::text) FROM woken
)
SELECT moved.*, (SELECT count(*) FROM notified) AS notified,
    (SELECT min(woken.id) FROM woken WHERE woken.wait_id = moved.id) AS woke_job
FROM moved;

-- name: claim_due_waits
-- Claim up to `batch` waiting rows whose wake time came (SKIP LOCKED): each claim bumps the epoch and moves the claim's due time `ttl_seconds` ahead.
UPDATE hive.queen_wait AS w
SET epoch = w.epoch + 1, claimed_by = %(holder)s,
    claim_due_at = now() + make_interval(secs => %(ttl_seconds)s::float8)
WHERE w.state = 0 AND w.id = ANY (ARRAY(
    SELECT c.id FROM hive.queen_wait AS c
    WHERE c.state = 0 AND c.wake_at <= now()
      AND (c.claim_due_at IS NULL OR c.claim_due_at <= now())
    ORDER BY c.wake_at, c.id
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
))
RETURNING w.*;

-- name: expire_claimed_wait
-- Expire one claimed waiting row at the epoch it was claimed at, waking its job; no row: a resolution came first or another claim took it.
WITH moved AS (
    UPDATE hive.queen_wait
    SET state = 2, resolved_at = now(), claimed_by = NULL, claim_due_at = NULL
    WHERE id = %(wait_id)s AND epoch = %(epoch)s AND state = 0
    RETURNING *
), woken AS (
    UPDATE hive.queen_job AS j
    SET state = 'ready', claimed_by = NULL, claim_due_at = NULL, updated_at = now()
    FROM moved WHERE j.wait_id = moved.id AND j.state = 'parked'
    RETURNING j.id, j.wait_id
), notified AS (
    SELECT pg_notify('hive_waits', moved.id::text) FROM moved
    UNION ALL
    SELECT pg_notify('hive_jobs', woken.id::text) FROM woken
)
SELECT moved.*, (SELECT count(*) FROM notified) AS notified,
    (SELECT min(woken.id) FROM woken WHERE woken.wait_id = moved.id) AS woke_job
FROM moved;

-- name: cancel_wait
-- Cancel one waiting row; nobody is woken (no row: it had already moved).
UPDATE hive.queen_wait SET state = 3, resolved_at = now()
WHERE id = %(wait_id)s AND state = 0
RETURNING *;

-- name: get_wait
-- One wait by id.
SELECT * FROM hive.queen_wait WHERE id = %(wait_id)s;

-- name: wait_due_in_seconds
-- Seconds until the nearest waiting row's wake time (0 or less: now; NULL: none), for the scheduler's poll.
SELECT EXTRACT(EPOCH FROM min(wake_at) - now())::float8 AS due_in_seconds
FROM hive.queen_wait WHERE state = 0 AND wake_at IS NOT NULL;

-- name: listen_waits
-- Subscribe this connection to hive_waits, the hint that a wait resolved or expired.
LISTEN hive_waits;
