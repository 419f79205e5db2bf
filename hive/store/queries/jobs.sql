-- name: create_job
-- Create a ready job (NOTIFY hive_jobs), or find the live one of this kind for this issue; `created` says which.
-- A conflict with a live job committed after this statement's snapshot returns nothing:
-- the caller asks again.
WITH ins AS (
    INSERT INTO hive.queen_job AS j (kind, issue, attempt, step, args, detail)
    VALUES (%(kind)s, %(issue)s::integer, %(attempt)s::integer, %(step)s, %(args)s,
        %(detail)s::text)
    ON CONFLICT (kind, issue) WHERE state IN ('ready', 'parked') DO NOTHING
    RETURNING j.*
), notified AS (
    SELECT pg_notify('hive_jobs', ins.id::text) FROM ins
)
SELECT ins.*, true AS created FROM ins WHERE (SELECT count(*) FROM notified) >= 0
UNION ALL
SELECT j.*, false AS created FROM hive.queen_job AS j
WHERE j.kind = %(kind)s AND j.issue = %(issue)s::integer AND j.state IN ('ready', 'parked')
  AND NOT EXISTS (SELECT 1 FROM ins);

-- name: claim_jobs
-- Claim up to `batch` ready, due jobs of a kind (SKIP LOCKED), the longest due first (rules.job_slots.due_since), none of those the claimant is `running`: each claim bumps the epoch and moves the claim's due time `ttl_seconds` ahead.
UPDATE hive.queen_job AS j
SET epoch = j.epoch + 1, claimed_by = %(holder)s,
    claim_due_at = now() + make_interval(secs => %(ttl_seconds)s::float8), updated_at = now()
WHERE j.state = 'ready' AND j.id = ANY (ARRAY(
    SELECT c.id FROM hive.queen_job AS c
    WHERE c.state = 'ready' AND c.kind = %(kind)s
      AND (c.claim_due_at IS NULL OR c.claim_due_at <= now())
      AND c.id <> ALL (%(running_jobs)s::bigint[])
    ORDER BY COALESCE(c.claim_due_at, c.updated_at), c.id
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
))
RETURNING j.*;

-- name: advance_job
-- Move a claimed job to its next step and renew the claim, only at the epoch it was claimed at (no row: the claim was lost).
UPDATE hive.queen_job
SET step = %(step)s, detail = %(detail)s::text, updated_at = now(),
    claim_due_at = now() + make_interval(secs => %(ttl_seconds)s::float8)
WHERE id = %(job)s AND epoch = %(epoch)s AND state = 'ready'
RETURNING *;

-- name: renew_job
-- Move a claimed job's claim `ttl_seconds` ahead, at its claimed epoch (a long step calls it; no row: the claim was lost).
UPDATE hive.queen_job
SET claim_due_at = now() + make_interval(secs => %(ttl_seconds)s::float8), updated_at = now()
WHERE id = %(job)s AND epoch = %(epoch)s AND state = 'ready'
RETURNING *;

-- name: release_job
-- Give a claimed job back at its claimed epoch, due at once (NOTIFY hive_jobs); no row: the claim was lost.
WITH released AS (
    UPDATE hive.queen_job
    SET claimed_by = NULL, claim_due_at = NULL, updated_at = now()
    WHERE id = %(job)s AND epoch = %(epoch)s AND state = 'ready'
    RETURNING *
), notified AS (
    SELECT pg_notify('hive_jobs', released.id::text) FROM released
)
SELECT released.*, (SELECT count(*) FROM notified) AS notified FROM released;

-- name: finish_job
-- End a claimed job (done, failed or cancelled) with its last step and sentence, at its claimed epoch; no row: the claim was lost.
UPDATE hive.queen_job
SET state = %(job_state)s, step = %(step)s, detail = %(detail)s::text, claimed_by = NULL,
    claim_due_at = NULL, finished_at = now(), updated_at = now()
WHERE id = %(job)s AND epoch = %(epoch)s AND state = 'ready'
  AND %(job_state)s IN ('done', 'failed', 'cancelled')
RETURNING *;

-- name: park_job
-- Park a claimed job on a new wait owned by `job:<id>` (a key, a wake time, or both), at its claimed epoch; no row (and no wait): the claim was lost.
-- `held` locks the job first, so the wait exists only if the job really parks on it.
WITH held AS (
    SELECT id FROM hive.queen_job
    WHERE id = %(job)s AND epoch = %(epoch)s AND state = 'ready'
    FOR UPDATE
), w AS (
    INSERT INTO hive.queen_wait (owner, key, wake_at, payload)
    SELECT 'job:' || held.id, %(wait_key)s::text,
        now() + make_interval(secs => %(wake_in_seconds)s::float8), %(payload)s::jsonb
    FROM held
    RETURNING id
)
UPDATE hive.queen_job AS j
SET state = 'parked', wait_id = w.id, detail = %(detail)s::text, claimed_by = NULL,
    claim_due_at = NULL, updated_at = now()
FROM w
WHERE j.id = %(job)s
RETURNING j.*;

-- name: unpark_jobs
-- Make ready (due at once, NOTIFY hive_jobs) every job parked on a wait that resolved or expired: that wait's, or all of them when none is named (a repair sweep).
WITH woken AS (
    UPDATE hive.queen_job AS j
    SET state = 'ready', claimed_by = NULL, claim_due_at = NULL, updated_at = now()
    FROM hive.queen_wait AS w
    WHERE j.state = 'parked' AND j.wait_id = w.id AND w.state IN (1, 2)
      AND (%(wait_id)s::bigint IS NULL OR w.id = %(wait_id)s::bigint)
    RETURNING j.*
), notified AS (
    SELECT pg_notify('hive_jobs', woken.id::text) FROM woken
)
SELECT woken.*, (SELECT count(*) FROM notified) AS notified FROM woken;

-- name: cancel_jobs
-- Cancel the live jobs of an issue (of one kind, or all), so their holder's next fenced write does not land, and cancel the waits they are parked on.
WITH ended AS (
    UPDATE hive.queen_job
    SET state = 'cancelled', detail = %(detail)s::text, claimed_by = NULL,
        claim_due_at = NULL, finished_at = now(), updated_at = now()
    WHERE issue = %(issue)s AND state IN ('ready', 'parked')
      AND (%(kind)s::text IS NULL OR kind = %(kind)s::text)
    RETURNING *
), dropped AS (
    UPDATE hive.queen_wait AS w SET state = 3, resolved_at = now()
    FROM ended WHERE w.id = ended.wait_id AND w.state = 0
    RETURNING w.id
)
SELECT ended.*, (SELECT count(*) FROM dropped) AS waits_cancelled FROM ended;

-- name: get_job
-- One job by id.
SELECT * FROM hive.queen_job WHERE id = %(job)s;

-- name: live_job
-- The live (ready or parked) job of a kind for an issue, if any.
SELECT * FROM hive.queen_job
WHERE kind = %(kind)s AND issue = %(issue)s AND state IN ('ready', 'parked');

-- name: job_due_in_seconds
-- Seconds until the nearest ready job of a kind may be claimed (0 or less: now; NULL: none), for a runner's poll.
SELECT EXTRACT(EPOCH FROM min(COALESCE(claim_due_at, now())) - now())::float8 AS due_in_seconds
FROM hive.queen_job WHERE state = 'ready' AND kind = %(kind)s;

-- name: begin_effect
-- Journal an effect before it is acted on, only while the job is held at its claimed epoch; the existing row if it was journaled before (done: its result); no row: the claim was lost.
WITH held AS (
    SELECT id FROM hive.queen_job
    WHERE id = %(job)s AND epoch = %(epoch)s AND state = 'ready'
    FOR SHARE
), ins AS (
    INSERT INTO hive.queen_effect (job, effect_key)
    SELECT held.id, %(effect_key)s FROM held
    ON CONFLICT (job, effect_key) DO NOTHING
    RETURNING *
)
SELECT ins.* FROM ins
UNION ALL
SELECT e.* FROM hive.queen_effect AS e JOIN held ON e.job = held.id
WHERE e.effect_key = %(effect_key)s AND NOT EXISTS (SELECT 1 FROM ins);

-- name: finish_effect
-- Mark a journaled effect done with its result, once (not fenced: it records what was done).
UPDATE hive.queen_effect SET done = true, result = %(result)s, done_at = now()
WHERE job = %(job)s AND effect_key = %(effect_key)s AND NOT done
RETURNING *;

-- name: job_effects
-- A job's journal, oldest first.
SELECT * FROM hive.queen_effect WHERE job = %(job)s ORDER BY created_at, effect_key;

-- name: listen_jobs
-- Subscribe this connection to hive_jobs, the hint that a job became ready.
LISTEN hive_jobs;
