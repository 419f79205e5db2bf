-- 0016: a check red on the base too says so in a column (`inherited`), not only in the
-- sentence at the head of its output ("also red on <base>: not this work's fault"),
-- which stays for people and is never read back. Runs recorded before are marked from
-- that sentence, once, here.
ALTER TABLE hive.queen_check ADD COLUMN inherited boolean NOT NULL DEFAULT false;

UPDATE hive.queen_check SET inherited = true
WHERE result <> 'pass' AND output_tail LIKE 'also red on %: not this work''s fault' || E'\n' || '%';
