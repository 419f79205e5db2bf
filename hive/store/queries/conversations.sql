-- name: keep_conversation
-- Store the conversation this attempt leaves (bytes given) or drop the issue's earlier one (no agent: the turn left none), only while the attempt is still its row's and unfinished: a fenced-out turn writes nothing.
WITH ours AS (
    SELECT issue FROM hive.queen_dispatch
    WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s
      AND claimed_by IS NOT DISTINCT FROM %(runner)s::text AND finished_at IS NULL
), stored AS (
    INSERT INTO hive.queen_conversation AS c
        (issue, conversation_id, agent, session_id, bytes, size, note)
    SELECT ours.issue, %(conversation_id)s, %(agent)s::text, %(session_id)s::text,
        %(bytes)s::bytea, length(%(bytes)s::bytea), %(note)s::text
    FROM ours WHERE %(agent)s::text IS NOT NULL
    ON CONFLICT (issue) DO UPDATE SET
        conversation_id = excluded.conversation_id, agent = excluded.agent,
        session_id = excluded.session_id, bytes = excluded.bytes, size = excluded.size,
        note = excluded.note, created_at = now()
), dropped AS (
    DELETE FROM hive.queen_conversation AS c USING ours
    WHERE c.issue = ours.issue AND %(agent)s::text IS NULL
)
SELECT issue FROM ours;

-- name: get_conversation
-- The conversation the issue's latest attempt left, for the next attempt's start.
SELECT issue, conversation_id, agent, session_id, bytes AS data, size, note, created_at
FROM hive.queen_conversation WHERE issue = %(issue)s;
