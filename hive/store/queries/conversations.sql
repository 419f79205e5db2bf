-- name: get_conversation
-- The conversation the issue's latest attempt left, for the next attempt's start.
SELECT issue, conversation_id, agent, session_id, bytes AS data, size, note, created_at
FROM hive.queen_conversation WHERE issue = %(issue)s;

-- name: get_earlier
-- What the issue's last attempt left for the next one's start, in one read: its bundle's bytes (when `bundle`) and its conversation (when `conversation`); one row, NULLs for what is not there or not asked.
SELECT b.bytes AS bundle, c.agent, c.session_id, c.bytes AS data, c.note
FROM (SELECT %(issue)s::integer AS issue) AS i
LEFT JOIN hive.queen_bundle AS b ON b.issue = i.issue AND %(bundle)s::boolean
LEFT JOIN hive.queen_conversation AS c ON c.issue = i.issue AND %(conversation)s::boolean;
