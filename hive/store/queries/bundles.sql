-- name: get_bundle
-- The stored bundle of one issue's latest ending (the export route serves it).
SELECT issue, branch, base, base_sha, head_sha, runner, bytes AS data, size, created_at
FROM hive.queen_bundle WHERE issue = %(issue)s;

-- name: list_bundles
-- Every stored bundle without its bytes, by issue.
SELECT issue, branch, base, base_sha, head_sha, runner, size, created_at
FROM hive.queen_bundle ORDER BY issue;
