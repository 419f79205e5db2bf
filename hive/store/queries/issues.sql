-- name: upsert_issue
-- Create an issue or replace its fields (state and created_at are kept on update, and its account when none is given); the trigger NOTIFYs hive_issues (the Queen rounds at once).
INSERT INTO hive.queen_issue AS i
    (number, title, body, labels, boundary, criteria, blocked_by, account)
VALUES (%(number)s, %(title)s, %(body)s, %(labels)s, %(boundary)s, %(criteria)s,
    %(blocked_by)s, %(account)s)
ON CONFLICT (number) DO UPDATE SET
    title = excluded.title, body = excluded.body, labels = excluded.labels,
    boundary = excluded.boundary, criteria = excluded.criteria,
    blocked_by = excluded.blocked_by, account = COALESCE(excluded.account, i.account),
    updated_at = now()
RETURNING *;

-- name: create_issue
-- Create an issue with the next free number (a person's: its origin is the hive); the trigger NOTIFYs hive_issues (the Queen rounds at once).
INSERT INTO hive.queen_issue
    (number, title, body, labels, boundary, criteria, blocked_by, account, origin)
SELECT COALESCE(max(number), 0) + 1, %(title)s, %(body)s, %(labels)s, %(boundary)s,
    %(criteria)s, %(blocked_by)s, %(account)s, 'hive'
FROM hive.queen_issue
RETURNING *;

-- name: listen_issues
-- Subscribe this connection to hive_issues, the hint that an issue was added, reopened or changed.
LISTEN hive_issues;

-- name: unlisten_issues
-- Unsubscribe this connection from hive_issues.
UNLISTEN hive_issues;

-- name: follow_forge_issue
-- Mark an issue as GitHub's, followed up to that issue's updated_at (never back).
UPDATE hive.queen_issue
SET origin = 'github',
    forge_updated_at = GREATEST(forge_updated_at, %(forge_updated_at)s)
WHERE number = %(number)s AND origin IS DISTINCT FROM 'hive'
RETURNING number;

-- name: get_issue
-- One issue by number.
SELECT * FROM hive.queen_issue WHERE number = %(number)s;

-- name: list_issues
-- Issues by number, the open ones only if asked.
SELECT * FROM hive.queen_issue
WHERE %(open_only)s = false OR state = 'open'
ORDER BY number;

-- name: set_issue_state
-- Open or close an issue; the trigger NOTIFYs hive_issues for an opened one (the Queen rounds at once).
UPDATE hive.queen_issue SET state = %(state)s, updated_at = now()
WHERE number = %(number)s
RETURNING number;
