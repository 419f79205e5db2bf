-- 0007: what an attempt cost, and keys that rest, kept in the store.
--
-- `cost_usd` is the attempt's cost in US dollars: the agent's own figure when it reports
-- one, else its tokens priced by the price table (hive/rules/spend.py); NULL when
-- neither is known. `cost_source` says which ('agent' or 'prices'). An archived attempt
-- keeps both in its snapshot, so a day's spend counts every attempt that ended in it.
ALTER TABLE hive.queen_dispatch
    ADD COLUMN cost_usd double precision,
    ADD COLUMN cost_source text;

-- The day's spend reads the archived attempts of that day: one ended before it was
-- archived, so its archived_at bounds the search.
CREATE INDEX queen_dispatch_history_archived_at ON hive.queen_dispatch_history (archived_at);

-- A key that rests after its provider refused a turn on it (RULES 7), one row per
-- key_index, written by the ending that met the refusal (hive/store/keyrests.py), so a
-- restarted or standby Queen skips it too. `strikes` counts the refusals in a row (any
-- other ending of a turn on the key ends the run and the rest); `rests_until` is when
-- the key may take a turn again; `key_fingerprint` names the key that was refused (a
-- row of a key that was replaced since rests nothing).
CREATE TABLE hive.queen_key_rest (
    key_index        integer PRIMARY KEY,
    key_fingerprint  text,
    strikes          integer NOT NULL DEFAULT 0,
    rests_until      timestamptz,
    reason           text,
    updated_at       timestamptz NOT NULL DEFAULT now()
);
