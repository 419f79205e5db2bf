-- 0011: GitHub's deliveries are not trusted for order (issue 25).
--
-- An issue keeps where it came from: `origin` is 'hive' for one a person added here
-- (`hive issue add`, POST /api/issues) and 'github' for one the intake brought in; NULL
-- for a row from before, taken as either. GitHub's issue #8 never changes the hive's own
-- #8, and the hive never comments on or closes GitHub's #8 for it.
--
-- `forge_updated_at` is the `updated_at` of the GitHub issue the row last followed: a
-- delivery or a poll showing an older state changes nothing (an old "closed" after a
-- reopen, an old "opened" after an edit).
ALTER TABLE hive.queen_issue
    ADD COLUMN origin text CHECK (origin IN ('hive', 'github')),
    ADD COLUMN forge_updated_at timestamptz;

-- Each webhook delivery handled, by its X-GitHub-Delivery, for a week: a replay (GitHub's
-- "Redeliver", or anyone holding a signed body) changes nothing.
CREATE TABLE hive.forge_delivery (
    id           text PRIMARY KEY,
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX forge_delivery_received_at ON hive.forge_delivery (received_at);
