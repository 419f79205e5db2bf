-- name: insert_report
-- One round's report, written even when the round did nothing (unless it says what the Queen's last one said, not yet REPORT_REPEAT_SECONDS old: hive.rules.report).
INSERT INTO hive.queen_report (headline, body, needs_you)
VALUES (%(headline)s, %(body)s, %(needs_you)s)
RETURNING id, at, headline, body, needs_you;

-- name: latest_reports
-- The most recent round reports, newest first.
SELECT id, at, headline, body, needs_you FROM hive.queen_report
ORDER BY at DESC, id DESC LIMIT %(limit)s;
