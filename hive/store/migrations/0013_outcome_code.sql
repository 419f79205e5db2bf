-- 0013: an order's outcome as a code (hive.rules.outcome_codes.OutcomeCode; a test keeps
-- the two equal). Every writer names `outcome_code`; `outcome` stays beside it, the
-- sentence for people. `hive.order_state` reads the code, not the sentence. Rows written
-- before are given their code from their sentence, once, here ('other' for a sentence
-- outside the closed set: its state stays RELEASED, as the sentence read before).
CREATE TYPE hive.outcome_code AS ENUM (
    'finished', 'ended_badly', 'ended_unexpectedly', 'refused', 'quota_exhausted',
    'handed_back', 'reaped_at_boot', 'reaped_runner_silent', 'reaped_no_completion',
    'cancelled', 'other'
);

ALTER TABLE hive.queen_dispatch ADD COLUMN outcome_code hive.outcome_code;

UPDATE hive.queen_dispatch SET outcome_code = CASE
    WHEN outcome = 'finished' THEN 'finished'
    WHEN outcome = 'ended badly' THEN 'ended_badly'
    WHEN outcome = 'ended unexpectedly' THEN 'ended_unexpectedly'
    WHEN outcome = 'refused' THEN 'refused'
    WHEN outcome = 'quota exhausted' THEN 'quota_exhausted'
    WHEN outcome = 'handed back' THEN 'handed_back'
    WHEN outcome = 'reaped at boot' THEN 'reaped_at_boot'
    WHEN outcome = 'reaped: runner silent' THEN 'reaped_runner_silent'
    WHEN starts_with(outcome, 'reaped: no completion within ') THEN 'reaped_no_completion'
    WHEN outcome = 'cancelled' THEN 'cancelled'
    ELSE 'other'
END::hive.outcome_code
WHERE outcome IS NOT NULL;

-- a writer names both or neither
ALTER TABLE hive.queen_dispatch ADD CONSTRAINT queen_dispatch_outcome_code
    CHECK ((outcome IS NULL) = (outcome_code IS NULL));

-- NONE 0, RUNNING 1, REFUSED 2, ENDED 3, WAIT 4, ACCEPT 5, SENDBACK 6, ESCALATE 7,
-- EMPTY 8, STALE 9, REAPED 10, RELEASED 11, ILLEGAL 99 (hive.rules.states.State).
DROP FUNCTION hive.order_state(boolean, timestamptz, text, text);
CREATE FUNCTION hive.order_state(
    started boolean, finished_at timestamptz, code hive.outcome_code, review_state text
) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN NOT started THEN CASE WHEN code = 'refused' THEN 2 ELSE 0 END
        WHEN finished_at IS NULL THEN 1
        WHEN code = 'refused' THEN 2
        WHEN code IN ('reaped_at_boot', 'reaped_runner_silent', 'reaped_no_completion',
            'cancelled') THEN 10
        WHEN code IS DISTINCT FROM 'finished' THEN 11
        WHEN review_state IS NULL THEN 3
        WHEN review_state = 'wait' THEN 4
        WHEN review_state = 'accept' THEN 5
        WHEN review_state = 'sendback' THEN 6
        WHEN review_state = 'escalate' THEN 7
        WHEN review_state = 'empty' THEN 8
        WHEN review_state = 'stale' THEN 9
        WHEN review_state = 'released' THEN 11
        ELSE 99
    END
$$;
