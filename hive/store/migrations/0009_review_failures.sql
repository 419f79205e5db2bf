-- 0009: no review strands an issue (DESIGN 11). `review_failures` counts this attempt's
-- reviews in a row that could not give a verdict (the reviewer did not start, crashed,
-- passed its bound, said nothing on a criterion, had its key refused); a verdict sets
-- it back to 0, a new attempt starts at 0, and HIVE_REVIEW_FAILURES_MAX of them
-- escalate the work to a person (hive/rules/review_failures.py).
ALTER TABLE hive.queen_dispatch
    ADD COLUMN review_failures integer NOT NULL DEFAULT 0;
