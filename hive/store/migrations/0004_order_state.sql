-- 0004: an order's state read from its row (RULES 4), the SQL twin of
-- hive.rules.lifecycle.state_of (a test keeps the two equal on every combination).
-- Writers that move an order land only from the states hive.rules.lifecycle.sources()
-- allows for their event: `hive.order_state(...) = ANY (%(from_states)s)`.
-- NONE 0, RUNNING 1, REFUSED 2, ENDED 3, WAIT 4, ACCEPT 5, SENDBACK 6, ESCALATE 7,
-- EMPTY 8, STALE 9, REAPED 10, RELEASED 11, ILLEGAL 99.
CREATE FUNCTION hive.order_state(
    started boolean, finished_at timestamptz, outcome text, review_state text
) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN NOT started THEN CASE WHEN outcome = 'refused' THEN 2 ELSE 0 END
        WHEN finished_at IS NULL THEN 1
        WHEN outcome = 'refused' THEN 2
        WHEN outcome = 'cancelled' OR starts_with(outcome, 'reaped') THEN 10
        WHEN outcome IS DISTINCT FROM 'finished' THEN 11
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
