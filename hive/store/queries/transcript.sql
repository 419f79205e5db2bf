-- name: append_transcript
-- Add one line to a turn's transcript with the next sequence number (one writer per turn).
INSERT INTO hive.queen_transcript (conversation_id, seq, issue, kind, text)
SELECT %(conversation_id)s, COALESCE(max(seq), 0) + 1, %(issue)s, %(kind)s,
    left(%(text)s, %(max_chars)s)
FROM hive.queen_transcript WHERE conversation_id = %(conversation_id)s
RETURNING conversation_id, seq, issue, at, kind, text;

-- name: read_transcript
-- One turn's transcript in order, from a sequence number on.
SELECT conversation_id, seq, issue, at, kind, text FROM hive.queen_transcript
WHERE conversation_id = %(conversation_id)s AND seq > %(after)s
ORDER BY seq;
