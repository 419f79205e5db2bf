-- 0010: credits (hive/rules/credits.py): who pays for an issue's turns, and the ledger
-- of every movement of tokens (half US cents).
--
-- An issue names its payer account (NULL: the default account pays). An order carries
-- the account its turns are sold to and the markup they are sold at, as the Queen
-- decided when she wrote it (NULL account: credits were off, nothing is sold), and the
-- owner of the key it runs on (HIVE_WORKER_KEY_OWNERS), who earns nothing by it.
ALTER TABLE hive.queen_issue ADD COLUMN account text;
ALTER TABLE hive.queen_dispatch
    ADD COLUMN credit_account text,
    ADD COLUMN credit_markup numeric,
    ADD COLUMN key_owner text;

-- One row per account that ever moved a token: every movement of an account takes this
-- row's lock first, so its ledger rows are written one at a time, in id order.
CREATE TABLE hive.queen_credit_account (
    account     text PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The ledger: one row per movement, never updated, never deleted. Balances are derived
-- from it (replayed in id order), never stored beside it.
--   grant  a lot lands: `tokens`, `burns_at`, a `note`
--   sale   a turn is sold: `tokens` (markup x cost, rounded up), the `turn` sold (unique:
--          a turn is sold once, however often its ending is delivered), its `issue`,
--          `cost_micros` (NULL: unpriced), the `markup`, what no lot covered
--          (`overdrawn`), the key it ran on and that key's owner
--   burn   a lot's remainder is gone: `lot` is the grant's id (unique: a lot burns once)
CREATE TABLE hive.queen_credit_ledger (
    id           bigserial PRIMARY KEY,
    account      text NOT NULL REFERENCES hive.queen_credit_account (account),
    kind         text NOT NULL CHECK (kind IN ('grant', 'sale', 'burn')),
    tokens       bigint NOT NULL CHECK (tokens >= 0),
    at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    burns_at     timestamptz,
    note         text,
    turn         text,
    issue        integer,
    cost_micros  bigint CHECK (cost_micros >= 0),
    markup       numeric,
    overdrawn    bigint CHECK (overdrawn >= 0),
    key_index    integer,
    key_owner    text,
    lot          bigint REFERENCES hive.queen_credit_ledger (id),
    CHECK (kind <> 'grant' OR burns_at IS NOT NULL),
    CHECK (kind <> 'sale' OR (turn IS NOT NULL AND markup IS NOT NULL AND overdrawn IS NOT NULL)),
    CHECK (kind <> 'burn' OR lot IS NOT NULL)
);
CREATE UNIQUE INDEX queen_credit_ledger_turn ON hive.queen_credit_ledger (turn)
    WHERE kind = 'sale';
CREATE UNIQUE INDEX queen_credit_ledger_lot ON hive.queen_credit_ledger (lot)
    WHERE kind = 'burn';
CREATE INDEX queen_credit_ledger_account ON hive.queen_credit_ledger (account, id);
CREATE INDEX queen_credit_ledger_issue ON hive.queen_credit_ledger (issue)
    WHERE issue IS NOT NULL;
CREATE INDEX queen_credit_ledger_burns_at ON hive.queen_credit_ledger (burns_at)
    WHERE kind = 'grant';
