-- 0014: why an issue closed, as a code (hive.rules.issue_states.ClosedCode; a test keeps
-- the two equal): `merged` (its work landed on the base), `by_hand` (a person, or its
-- GitHub issue, closed it), `other` (a reason from before the code). `closed_reason`
-- stays beside it, the sentence for people ("merged as <sha>"); nothing reads it back.
-- Rows closed before are given their code from their sentence, once, here.
CREATE TYPE hive.closed_code AS ENUM ('merged', 'by_hand', 'other');

ALTER TABLE hive.queen_issue ADD COLUMN closed_code hive.closed_code;

UPDATE hive.queen_issue SET closed_code = CASE
    WHEN starts_with(closed_reason, 'merged as ') THEN 'merged'
    WHEN closed_reason = 'closed by hand' THEN 'by_hand'
    ELSE 'other'
END::hive.closed_code
WHERE closed_reason IS NOT NULL;

-- a writer names both or neither
ALTER TABLE hive.queen_issue ADD CONSTRAINT queen_issue_closed_code
    CHECK ((closed_reason IS NULL) = (closed_code IS NULL));
