-- The retry card (hive/rules/retry.py): how many attempts of the issue failed in a row
-- before this one. `insert_order` sets it when it replaces an ended row: one more than the
-- old row's when that attempt failed, 0 after anything else. A row migrated from 0001
-- starts at 0 (its earlier failures are not counted: the back-off starts afresh).
ALTER TABLE hive.queen_dispatch
    ADD COLUMN failures_in_a_row integer NOT NULL DEFAULT 0;
