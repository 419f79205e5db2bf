-- name: release_at_floor
-- Release this attempt whose floor passed (review_state 'released'), only from a state FLOOR_PASSED may leave, still in the state the floor was judged in; only a send-back keeps its note (for the next attempt's brief).
UPDATE hive.queen_dispatch SET
    review_state = 'released',
    review_note = CASE
        WHEN hive.order_state(started, finished_at, outcome_code, review_state) = %(note_kept_from)s
        THEN review_note END
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
  AND hive.order_state(started, finished_at, outcome_code, review_state) = ANY (%(from_states)s)
  AND hive.order_state(started, finished_at, outcome_code, review_state) = %(judged_state)s
RETURNING issue;
