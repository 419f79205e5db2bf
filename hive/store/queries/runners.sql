-- name: register_runner
-- A runner announces itself at start (a restart under the same name starts afresh).
INSERT INTO hive.queen_runner AS r (name, slots)
VALUES (%(name)s, %(slots)s)
ON CONFLICT (name) DO UPDATE SET
    started_at = now(), seen_at = now(), slots = excluded.slots, running = 0, draining = false
RETURNING *;

-- name: runner_seen
-- A runner's periodic sign of life with its current load.
UPDATE hive.queen_runner
SET seen_at = now(), running = %(running)s, draining = %(draining)s
WHERE name = %(name)s
RETURNING name;

-- name: list_runners
-- Every runner, most recently seen first.
SELECT * FROM hive.queen_runner ORDER BY seen_at DESC, name;

-- name: forget_runner
-- Remove a runner that left.
DELETE FROM hive.queen_runner WHERE name = %(name)s RETURNING name;
