-- name: shape_of
-- The shaper's row of one issue (none: never shaped).
SELECT issue, state, boundary, criteria, problem, note, failures, pause_seconds, retry_at, updated_at
FROM hive.queen_shape WHERE issue = %(issue)s;

-- name: shapes_of_open
-- The shaper's rows of the open issues, with whether each may be tried now (its pause passed).
SELECT s.issue, s.state, s.boundary, s.criteria, s.problem, s.note, s.failures, s.pause_seconds,
    s.retry_at, s.updated_at
FROM hive.queen_shape AS s
JOIN hive.queen_issue AS i ON i.number = s.issue AND i.state = 'open';

-- name: put_shape
-- Write the shaper's answer for one issue: its state, proposal, the problem it answered, its sentence, and its failure floor.
INSERT INTO hive.queen_shape AS s
    (issue, state, boundary, criteria, problem, note, failures, pause_seconds, retry_at, updated_at)
VALUES (%(issue)s, %(state)s, %(boundary)s, %(criteria)s, %(problem)s, %(note)s, %(failures)s,
    %(pause_seconds)s, now() + make_interval(secs => %(pause_seconds)s), now())
ON CONFLICT (issue) DO UPDATE SET
    state = excluded.state, boundary = excluded.boundary, criteria = excluded.criteria,
    problem = excluded.problem, note = excluded.note, failures = excluded.failures,
    pause_seconds = excluded.pause_seconds, retry_at = excluded.retry_at, updated_at = now()
RETURNING issue;
