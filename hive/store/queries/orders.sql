-- name: insert_order
-- Write the Queen's decision (queued: queued_at now() and NOTIFY hive_orders) under her lease's fence when one is named; a row whose state lets a new attempt replace it is archived to history and replaced by attempt + 1; one row says what happened: 'written', 'in flight' (an unfinished row), 'held' (its state lets no new attempt replace it) or 'lease gone' (not held at that fence), and the old row's state.
-- `replaceable` are the states `hive.rules.lifecycle.may_replace` allows (RULES 4): the
-- `old` CTE and the ON CONFLICT guard both hold to them, so no other row is replaced.
-- `lease` is the named lease held by this holder at this fence and not expired (none
-- named: not under a lease, e.g. tests and benches); FOR SHARE makes a claim or release
-- of it wait for this statement, and a lease changed meanwhile is checked again in its
-- new version (clock_timestamp, not the transaction's start: a release that went first
-- is seen), so no order lands once the lease moved on.
-- `old` locks the finished row before `ins` runs (the WHERE on its count makes the
-- insert evaluate it first; a row this statement already updated could not be locked);
-- `archived` keeps that version only when `ins` really replaced it.
-- `failures_in_a_row` counts the old row's attempt when it failed (the retry card's
-- outcomes, passed in), else starts again at 0.
-- The verdict reads `lease` as this statement locked it: a lease gone wins over a row
-- in flight, as neither writes.
WITH lease AS (
    SELECT l.fence FROM hive.queen_lease AS l
    WHERE l.name = %(lease_name)s::text AND l.holder = %(lease_holder)s::text
      AND l.fence = %(lease_fence)s::bigint AND l.expires_at > clock_timestamp()
    FOR SHARE
), old AS (
    SELECT * FROM hive.queen_dispatch
    WHERE issue = %(issue)s
      AND hive.order_state(started, finished_at, outcome_code, review_state)
        = ANY (%(replaceable)s::integer[])
    FOR UPDATE
), ins AS (
    INSERT INTO hive.queen_dispatch AS d (
        issue, branch, base, base_sha, started, detail, conversation_id, owned_paths,
        key_index, key_fingerprint, brief, queued_at, dispatched_at, provider, model,
        credit_account, credit_markup, key_owner
    )
    SELECT
        %(issue)s, %(branch)s, %(base)s, %(base_sha)s, true, %(detail)s, %(conversation_id)s,
        %(owned_paths)s, %(key_index)s, %(key_fingerprint)s, %(brief)s,
        CASE WHEN %(queued)s THEN now() END,
        CASE WHEN %(queued)s THEN NULL ELSE now() END,
        %(provider)s, %(model)s,
        %(credit_account)s::text, %(credit_markup)s::numeric, %(key_owner)s::text
    WHERE (SELECT count(*) FROM old) >= 0
      AND (%(lease_name)s::text IS NULL OR EXISTS (SELECT 1 FROM lease))
    ON CONFLICT (issue) DO UPDATE SET
        branch = excluded.branch, base = excluded.base, base_sha = excluded.base_sha,
        started = true, detail = excluded.detail, conversation_id = excluded.conversation_id,
        owned_paths = excluded.owned_paths, key_index = excluded.key_index,
        key_fingerprint = excluded.key_fingerprint, brief = excluded.brief,
        queued_at = excluded.queued_at, claimed_by = NULL, claimed_at = NULL,
        refused_by = '{}', dispatched_at = excluded.dispatched_at, finished_at = NULL,
        outcome = NULL, outcome_code = NULL, salvaged_at = NULL, salvaged_sha = NULL,
        salvaged_files = NULL,
        review_state = NULL, review_note = NULL, reviewed_at = NULL, review_failures = 0,
        provider = excluded.provider, model = excluded.model,
        input_tokens = NULL, output_tokens = NULL, cost_usd = NULL, cost_source = NULL,
        credit_account = excluded.credit_account, credit_markup = excluded.credit_markup,
        key_owner = excluded.key_owner,
        attempt = d.attempt + 1, created_at = now(),
        failures_in_a_row = CASE
            WHEN d.outcome_code = ANY (%(failed_codes)s::hive.outcome_code[])
            THEN d.failures_in_a_row + 1 ELSE 0 END
    WHERE hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state)
        = ANY (%(replaceable)s::integer[])
    RETURNING d.issue
), archived AS (
    INSERT INTO hive.queen_dispatch_history (issue, snapshot)
    SELECT old.issue, to_jsonb(old) FROM old WHERE EXISTS (SELECT 1 FROM ins)
), notified AS (
    SELECT pg_notify('hive_orders', ins.issue::text) FROM ins WHERE %(queued)s
), was AS (
    SELECT hive.order_state(started, finished_at, outcome_code, review_state) AS state
    FROM hive.queen_dispatch WHERE issue = %(issue)s
)
SELECT
    CASE
        WHEN EXISTS (SELECT 1 FROM ins) THEN 'written'
        WHEN %(lease_name)s::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM lease)
        THEN 'lease gone'
        WHEN (SELECT state FROM was) <> ALL (%(in_flight)s::integer[]) THEN 'held'
        ELSE 'in flight'
    END AS verdict,
    (SELECT count(*) FROM notified) AS notified,
    (SELECT state FROM was) AS was;

-- name: claim_order
-- Claim the oldest queued, unclaimed, unfinished, started order this runner has not refused, in one statement (DESIGN 5.2).
UPDATE hive.queen_dispatch AS d
SET claimed_by = %(runner)s, claimed_at = now(), dispatched_at = now()
WHERE d.issue = (
    SELECT c.issue FROM hive.queen_dispatch AS c
    WHERE c.queued_at IS NOT NULL AND c.claimed_by IS NULL AND c.finished_at IS NULL
      AND c.started AND %(runner)s <> ALL (c.refused_by)
    ORDER BY c.queued_at, c.issue
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING d.issue, d.conversation_id, d.attempt, d.branch, d.base, d.base_sha,
    d.owned_paths, d.key_index, d.key_fingerprint, d.brief, d.queued_at, d.claimed_at,
    d.credit_account;

-- name: claim_orders
-- Claim up to `limit` of the oldest queued, unclaimed, unfinished, started orders this runner has not refused, in one statement (a runner with that many free slots); the rows come back oldest first.
WITH claimed AS (
    UPDATE hive.queen_dispatch AS d
    SET claimed_by = %(runner)s, claimed_at = now(), dispatched_at = now()
    WHERE d.issue = ANY (ARRAY(
        SELECT c.issue FROM hive.queen_dispatch AS c
        WHERE c.queued_at IS NOT NULL AND c.claimed_by IS NULL AND c.finished_at IS NULL
          AND c.started AND %(runner)s <> ALL (c.refused_by)
        ORDER BY c.queued_at, c.issue
        LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED
    ))
    RETURNING d.issue, d.conversation_id, d.attempt, d.branch, d.base, d.base_sha,
        d.owned_paths, d.key_index, d.key_fingerprint, d.brief, d.queued_at, d.claimed_at,
        d.credit_account
)
SELECT * FROM claimed ORDER BY queued_at, issue;

-- name: refuse_order
-- Release this runner's claim and add it to refused_by (its key does not resolve), waking the other runners.
WITH released AS (
    UPDATE hive.queen_dispatch
    SET claimed_by = NULL, claimed_at = NULL, dispatched_at = NULL,
        refused_by = array_append(refused_by, %(runner)s::text)
    WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
      AND claimed_by = %(runner)s AND finished_at IS NULL
    RETURNING issue
)
SELECT issue, pg_notify('hive_orders', issue::text)::text AS notified FROM released;

-- name: release_order
-- Release this runner's claim of this attempt, which it could not start (the drain began); queued again at its place, waking the other runners.
WITH released AS (
    UPDATE hive.queen_dispatch
    SET claimed_by = NULL, claimed_at = NULL, dispatched_at = NULL
    WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
      AND claimed_by = %(runner)s AND finished_at IS NULL
    RETURNING issue
)
SELECT issue, pg_notify('hive_orders', issue::text)::text AS notified FROM released;

-- name: mark_order_started
-- Reset dispatched_at when the turn really starts, fenced on this attempt and claimant (NULL for the Queen's own bee).
UPDATE hive.queen_dispatch SET dispatched_at = now()
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
  AND claimed_by IS NOT DISTINCT FROM %(runner)s::text AND finished_at IS NULL
RETURNING issue;

-- name: heartbeat_order
-- Renew claimed_at for this runner's claim of this attempt; no row means reaped or re-dispatched.
UPDATE hive.queen_dispatch SET claimed_at = now()
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
  AND claimed_by = %(runner)s AND finished_at IS NULL
RETURNING issue;

-- name: end_order
-- End this attempt with its outcome (event END: only from the states it may leave, RUNNING) and, in the same statement, store its bundle (bytes given) or drop a stale one, store the conversation its agent left (`keeps_conversation`: agent given) or drop the issue's earlier one, and NOTIFY hive_orders 'ended:N': no ended row without its bundle and conversation, none for a fenced-out or refused ending; an ending that is no refusal (`ends_rest`, hive/rules/rests.py) ends its key's rest.
WITH ended AS (
    UPDATE hive.queen_dispatch SET
        finished_at = now(), outcome = %(outcome)s,
        outcome_code = %(outcome_code)s::hive.outcome_code,
        detail = COALESCE(%(detail)s, detail),
        input_tokens = COALESCE(%(input_tokens)s::bigint, input_tokens),
        output_tokens = COALESCE(%(output_tokens)s::bigint, output_tokens),
        provider = COALESCE(%(provider)s::text, provider),
        model = COALESCE(%(model)s::text, model),
        cost_usd = COALESCE(%(cost_usd)s::double precision, cost_usd),
        cost_source = COALESCE(%(cost_source)s::text, cost_source),
        salvaged_at = CASE WHEN %(salvaged_sha)s::text IS NULL THEN salvaged_at ELSE now() END,
        salvaged_sha = COALESCE(%(salvaged_sha)s::text, salvaged_sha),
        salvaged_files = CASE WHEN %(salvaged_sha)s::text IS NULL THEN salvaged_files
            ELSE %(salvaged_files)s::text[] END
    WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
      AND claimed_by IS NOT DISTINCT FROM %(runner)s::text
      AND hive.order_state(started, finished_at, outcome_code, review_state)
        = ANY (%(from_states)s::integer[])
    RETURNING issue, key_index, key_fingerprint
), unrested AS (
    UPDATE hive.queen_key_rest AS r
    SET strikes = 0, rests_until = NULL, reason = NULL, updated_at = now()
    FROM ended
    WHERE %(ends_rest)s::boolean AND r.key_index = ended.key_index
      AND r.key_fingerprint IS NOT DISTINCT FROM ended.key_fingerprint
      AND (r.strikes > 0 OR r.rests_until IS NOT NULL)
), stored AS (
    INSERT INTO hive.queen_bundle AS b
        (issue, branch, base, base_sha, head_sha, runner, bytes, size)
    SELECT ended.issue, %(branch)s::text, %(base)s::text, %(base_sha)s::text,
        %(head_sha)s::text, %(runner)s::text, %(bytes)s::bytea, %(size)s::integer
    FROM ended WHERE %(bytes)s::bytea IS NOT NULL
    ON CONFLICT (issue) DO UPDATE SET
        branch = excluded.branch, base = excluded.base, base_sha = excluded.base_sha,
        head_sha = excluded.head_sha, runner = excluded.runner, bytes = excluded.bytes,
        size = excluded.size, created_at = now()
), dropped AS (
    DELETE FROM hive.queen_bundle AS b USING ended
    WHERE b.issue = ended.issue AND %(bytes)s::bytea IS NULL
), kept AS (
    INSERT INTO hive.queen_conversation AS c
        (issue, conversation_id, agent, session_id, bytes, size, note)
    SELECT ended.issue, %(conversation_id)s, %(agent)s::text, %(session_id)s::text,
        %(conversation_bytes)s::bytea, length(%(conversation_bytes)s::bytea), %(note)s::text
    FROM ended WHERE %(keeps_conversation)s::boolean AND %(agent)s::text IS NOT NULL
    ON CONFLICT (issue) DO UPDATE SET
        conversation_id = excluded.conversation_id, agent = excluded.agent,
        session_id = excluded.session_id, bytes = excluded.bytes, size = excluded.size,
        note = excluded.note, created_at = now()
), forgotten AS (
    DELETE FROM hive.queen_conversation AS c USING ended
    WHERE c.issue = ended.issue AND %(keeps_conversation)s::boolean AND %(agent)s::text IS NULL
)
SELECT issue, pg_notify('hive_orders', 'ended:' || issue::text)::text AS notified FROM ended;

-- name: end_orders
-- End several attempts in one statement, each exactly as end_order ends one (its own fence and states, its bundle, conversation, key rest and NOTIFY): the arrays are one element an ending, each issue at most once; the rows are locked in issue order (two such statements never wait on each other in a circle); each landed ending answers with its issue.
WITH given AS (
    SELECT * FROM unnest(
        %(issue)s::integer[], %(conversation_id)s::uuid[], %(runner)s::text[],
        %(outcome)s::text[], %(outcome_code)s::text[], %(detail)s::text[],
        %(input_tokens)s::bigint[], %(output_tokens)s::bigint[], %(provider)s::text[],
        %(model)s::text[], %(cost_usd)s::double precision[], %(cost_source)s::text[],
        %(ends_rest)s::boolean[], %(salvaged_sha)s::text[], %(salvaged_files)s::jsonb[],
        %(branch)s::text[], %(base)s::text[], %(base_sha)s::text[], %(head_sha)s::text[],
        %(bytes)s::bytea[], %(keeps_conversation)s::boolean[], %(agent)s::text[],
        %(session_id)s::text[], %(conversation_bytes)s::bytea[], %(note)s::text[]
    ) AS g(issue, conversation_id, runner, outcome, outcome_code, detail, input_tokens,
        output_tokens, provider, model, cost_usd, cost_source, ends_rest, salvaged_sha,
        salvaged_files, branch, base, base_sha, head_sha, bytes, keeps_conversation, agent,
        session_id, conversation_bytes, note)
), ended AS (
    UPDATE hive.queen_dispatch AS d SET
        finished_at = now(), outcome = g.outcome,
        outcome_code = g.outcome_code::hive.outcome_code,
        detail = COALESCE(g.detail, d.detail),
        input_tokens = COALESCE(g.input_tokens, d.input_tokens),
        output_tokens = COALESCE(g.output_tokens, d.output_tokens),
        provider = COALESCE(g.provider, d.provider),
        model = COALESCE(g.model, d.model),
        cost_usd = COALESCE(g.cost_usd, d.cost_usd),
        cost_source = COALESCE(g.cost_source, d.cost_source),
        salvaged_at = CASE WHEN g.salvaged_sha IS NULL THEN d.salvaged_at ELSE now() END,
        salvaged_sha = COALESCE(g.salvaged_sha, d.salvaged_sha),
        salvaged_files = CASE WHEN g.salvaged_sha IS NULL THEN d.salvaged_files
            ELSE ARRAY(SELECT jsonb_array_elements_text(g.salvaged_files)) END
    FROM given AS g
    WHERE d.issue = ANY (ARRAY(
        SELECT l.issue FROM hive.queen_dispatch AS l
        WHERE l.issue = ANY (%(issue)s::integer[])
        ORDER BY l.issue
        FOR UPDATE
    ))
      AND d.issue = g.issue AND d.conversation_id = g.conversation_id
      AND d.claimed_by IS NOT DISTINCT FROM g.runner
      AND hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state)
        = ANY (%(from_states)s::integer[])
    RETURNING d.issue, d.key_index, d.key_fingerprint, g.conversation_id, g.runner,
        g.ends_rest, g.branch, g.base, g.base_sha, g.head_sha, g.bytes,
        g.keeps_conversation, g.agent, g.session_id, g.conversation_bytes, g.note
), unrested AS (
    UPDATE hive.queen_key_rest AS r
    SET strikes = 0, rests_until = NULL, reason = NULL, updated_at = now()
    FROM ended
    WHERE ended.ends_rest AND r.key_index = ended.key_index
      AND r.key_fingerprint IS NOT DISTINCT FROM ended.key_fingerprint
      AND (r.strikes > 0 OR r.rests_until IS NOT NULL)
), stored AS (
    INSERT INTO hive.queen_bundle AS b
        (issue, branch, base, base_sha, head_sha, runner, bytes, size)
    SELECT ended.issue, ended.branch, ended.base, ended.base_sha, ended.head_sha,
        ended.runner, ended.bytes, length(ended.bytes)
    FROM ended WHERE ended.bytes IS NOT NULL
    ORDER BY ended.issue
    ON CONFLICT (issue) DO UPDATE SET
        branch = excluded.branch, base = excluded.base, base_sha = excluded.base_sha,
        head_sha = excluded.head_sha, runner = excluded.runner, bytes = excluded.bytes,
        size = excluded.size, created_at = now()
), dropped AS (
    DELETE FROM hive.queen_bundle AS b USING ended
    WHERE b.issue = ended.issue AND ended.bytes IS NULL
), kept AS (
    INSERT INTO hive.queen_conversation AS c
        (issue, conversation_id, agent, session_id, bytes, size, note)
    SELECT ended.issue, ended.conversation_id, ended.agent, ended.session_id,
        ended.conversation_bytes, length(ended.conversation_bytes), ended.note
    FROM ended WHERE ended.keeps_conversation AND ended.agent IS NOT NULL
    ORDER BY ended.issue
    ON CONFLICT (issue) DO UPDATE SET
        conversation_id = excluded.conversation_id, agent = excluded.agent,
        session_id = excluded.session_id, bytes = excluded.bytes, size = excluded.size,
        note = excluded.note, created_at = now()
), forgotten AS (
    DELETE FROM hive.queen_conversation AS c USING ended
    WHERE c.issue = ended.issue AND ended.keeps_conversation AND ended.agent IS NULL
)
SELECT issue, pg_notify('hive_orders', 'ended:' || issue::text)::text AS notified
FROM ended ORDER BY issue;

-- name: record_salvage
-- Record the salvage commit a reaper made for an attempt it already ended (fenced on the attempt).
UPDATE hive.queen_dispatch SET
    salvaged_at = now(), salvaged_sha = %(salvaged_sha)s, salvaged_files = %(salvaged_files)s::text[]
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s AND finished_at IS NOT NULL
RETURNING issue;

-- name: reap_orders
-- End the unfinished orders one reaper's criteria find (`reaper`), except the issues named, only from the states its event may leave (`from_states`), with its outcome sentence and code; each row answers with refused_state NULL when ended, else the state that refused it.
-- `boot`: the Queen's own orders (queued_at NULL), reaped at her start (REAP_BOOT).
-- `silent`: runner orders whose heartbeat is older than `silent_seconds` (REAP_STALL).
-- `stalled`: orders whose turn began longer ago than `stall_seconds`, never a queued
-- unclaimed one (REAP_STALL; an unstarted row is refused).
-- The rows found but in a state the event may not leave are named with their state,
-- so the caller logs and counts each refused move (RULES 4).
WITH found AS (
    SELECT issue, hive.order_state(started, finished_at, outcome_code, review_state) AS state
    FROM hive.queen_dispatch
    WHERE finished_at IS NULL AND issue <> ALL (%(spare)s::integer[])
      AND CASE %(reaper)s::text
        WHEN 'boot' THEN queued_at IS NULL
        WHEN 'silent' THEN queued_at IS NOT NULL AND claimed_by IS NOT NULL
            AND claimed_at < now() - make_interval(secs => %(silent_seconds)s::float8)
        WHEN 'stalled' THEN NOT (queued_at IS NOT NULL AND claimed_by IS NULL)
            AND dispatched_at < now() - make_interval(secs => %(stall_seconds)s::float8)
        ELSE false
      END
    FOR UPDATE
), reaped AS (
    UPDATE hive.queen_dispatch AS d SET finished_at = now(), outcome = %(outcome)s::text,
        outcome_code = %(outcome_code)s::hive.outcome_code
    FROM found WHERE d.issue = found.issue AND found.state = ANY (%(from_states)s::integer[])
    RETURNING d.*
)
SELECT reaped.*, NULL::integer AS refused_state FROM reaped
UNION ALL
SELECT d.*, found.state FROM found JOIN hive.queen_dispatch AS d ON d.issue = found.issue
WHERE found.state <> ALL (%(from_states)s::integer[]);

-- name: end_refused_order
-- End a queued order nobody holds as refused (END, only from the states it may leave), with the sentence that names its refusers; an earlier attempt's bundle stays (the next attempt continues it).
UPDATE hive.queen_dispatch SET finished_at = now(), outcome = 'refused', outcome_code = 'refused',
    detail = %(detail)s
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s AND queued_at IS NOT NULL
  AND claimed_by IS NULL AND finished_at IS NULL
  AND hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(from_states)s::integer[])
RETURNING issue;

-- name: get_order
-- One order by issue.
SELECT * FROM hive.queen_dispatch WHERE issue = %(issue)s;

-- name: list_orders
-- Every order, in flight or ended, by issue (the status listing).
SELECT * FROM hive.queen_dispatch
WHERE %(unfinished_only)s = false OR finished_at IS NULL
ORDER BY issue;

-- name: live_orders
-- The orders a Queen round decides by, by issue: in flight, of an open issue, ended since `held_since` (one may still hold its files), or resting in a state with a floor (`floor_states`); not the ended orders of closed issues, which grow with the history and change no decision.
SELECT * FROM hive.queen_dispatch
WHERE finished_at IS NULL
   OR issue = ANY (%(open_issues)s)
   OR finished_at > %(held_since)s
   OR hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(floor_states)s)
ORDER BY issue;

-- name: order_history
-- The archived attempts of one issue, oldest first.
SELECT id, issue, archived_at, snapshot FROM hive.queen_dispatch_history
WHERE issue = %(issue)s ORDER BY id;
