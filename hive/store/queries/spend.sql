-- name: spend_by_key_since
-- What turns that ended at or after a time spent, by key: the orders' current attempts, the archived ones, the chat's turns and the review and shaping turns at their own time (an attempt ends before it is archived, so archived_at bounds the search); cost NULL counts as unknown.
SELECT key_index, count(*) AS attempts,
    COALESCE(sum(cost_usd), 0)::double precision AS cost_usd,
    count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced,
    COALESCE(sum(input_tokens), 0)::bigint AS input_tokens,
    COALESCE(sum(output_tokens), 0)::bigint AS output_tokens
FROM (
    SELECT key_index, cost_usd, input_tokens, output_tokens
    FROM hive.queen_dispatch WHERE finished_at >= %(since)s
    UNION ALL
    SELECT (snapshot->>'key_index')::integer, (snapshot->>'cost_usd')::double precision,
        (snapshot->>'input_tokens')::bigint, (snapshot->>'output_tokens')::bigint
    FROM hive.queen_dispatch_history
    WHERE archived_at >= %(since)s AND (snapshot->>'finished_at')::timestamptz >= %(since)s
    UNION ALL
    SELECT turn_key_index, turn_cost_usd, turn_input_tokens, turn_output_tokens
    FROM hive.chat_outbox WHERE turn_ended_at >= %(since)s
    UNION ALL
    SELECT key_index, cost_usd, input_tokens, output_tokens
    FROM hive.turn_spend WHERE spent_at >= %(since)s
) AS ended
GROUP BY key_index
ORDER BY key_index NULLS LAST;

-- name: spend_of_issue
-- What every turn of one issue spent: the current attempt, the archived ones, the chat's turns on it and its review and shaping turns (an attempt in flight counts once it ends).
SELECT count(*) AS attempts,
    COALESCE(sum(cost_usd), 0)::double precision AS cost_usd,
    count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced,
    COALESCE(sum(input_tokens), 0)::bigint AS input_tokens,
    COALESCE(sum(output_tokens), 0)::bigint AS output_tokens
FROM (
    SELECT cost_usd, input_tokens, output_tokens
    FROM hive.queen_dispatch WHERE issue = %(issue)s AND finished_at IS NOT NULL
    UNION ALL
    SELECT (snapshot->>'cost_usd')::double precision, (snapshot->>'input_tokens')::bigint,
        (snapshot->>'output_tokens')::bigint
    FROM hive.queen_dispatch_history
    WHERE issue = %(issue)s AND snapshot->>'finished_at' IS NOT NULL
    UNION ALL
    SELECT turn_cost_usd, turn_input_tokens, turn_output_tokens
    FROM hive.chat_outbox WHERE issue = %(issue)s AND turn_ended_at IS NOT NULL
    UNION ALL
    SELECT cost_usd, input_tokens, output_tokens
    FROM hive.turn_spend WHERE issue = %(issue)s
) AS ended;

-- name: add_turn_spend
-- A review or shaping turn's usage and cost, at the time it was spent (the day's spend counts it then); a cost the store does not know is NULL.
INSERT INTO hive.turn_spend
    (kind, issue, conversation_id, key_index, input_tokens, output_tokens, cost_usd, cost_source)
VALUES (%(kind)s, %(issue)s, %(conversation_id)s, %(key_index)s, %(input_tokens)s,
    %(output_tokens)s, %(cost_usd)s, %(cost_source)s)
RETURNING id;
