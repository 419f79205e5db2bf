-- name: lock_credit_account
-- Make the account's row if it is new and lock it for this transaction (every movement of an account holds it, so its ledger is written in id order); answers the store's clock.
INSERT INTO hive.queen_credit_account AS a (account) VALUES (%(account)s)
ON CONFLICT (account) DO UPDATE SET account = a.account
RETURNING clock_timestamp() AS now;

-- name: credit_ledger
-- The ledger of some accounts as the replay reads it, in the order it was written, each run of sales between two other movements summed into one (they replay as one sale of their sum).
-- `run` counts the grants and burns up to each row, so a run is one grant or burn and
-- the sales after it; its sales are summed, its grant or burn kept as it is.
WITH numbered AS (
    SELECT id, account, kind, tokens, at, burns_at, lot,
        count(*) FILTER (WHERE kind <> 'sale') OVER (PARTITION BY account ORDER BY id) AS run
    FROM hive.queen_credit_ledger
    WHERE account = ANY (%(accounts)s::text[])
)
SELECT min(id) AS id, account, kind, sum(tokens)::bigint AS tokens, min(at) AS at,
    min(burns_at) AS burns_at, min(lot) AS lot
FROM numbered
GROUP BY account, run, kind
ORDER BY account, min(id);

-- name: credit_ledger_rows
-- Every ledger row of some accounts, in the order they were written (the chaos run's and the tests' evidence).
SELECT id, account, kind, tokens, at, burns_at, lot
FROM hive.queen_credit_ledger
WHERE account = ANY (%(accounts)s::text[])
ORDER BY id;

-- name: insert_credit_grant
-- A lot lands: a grant of tokens that burns at burns_at (the trigger NOTIFYs hive_issues 'credit:<account>').
INSERT INTO hive.queen_credit_ledger (account, kind, tokens, at, burns_at, note)
VALUES (%(account)s, 'grant', %(tokens)s, %(at)s, %(burns_at)s, %(note)s)
RETURNING id;

-- name: insert_credit_sale
-- A turn is sold; nothing when that turn was sold already (a redelivered ending).
INSERT INTO hive.queen_credit_ledger
    (account, kind, tokens, at, turn, issue, cost_micros, markup, overdrawn, key_index, key_owner)
VALUES (%(account)s, 'sale', %(tokens)s, %(at)s, %(turn)s, %(issue)s, %(cost_micros)s,
    %(markup)s, %(overdrawn)s, %(key_index)s, %(key_owner)s)
ON CONFLICT (turn) WHERE kind = 'sale' DO NOTHING
RETURNING id;

-- name: insert_credit_burn
-- A lot's remainder burns; nothing when that lot burned already.
INSERT INTO hive.queen_credit_ledger (account, kind, tokens, at, lot)
VALUES (%(account)s, 'burn', %(tokens)s, %(at)s, %(lot)s)
ON CONFLICT (lot) WHERE kind = 'burn' DO NOTHING
RETURNING id;

-- name: credit_history
-- An account's movements, newest first, as `hive credit history` shows them.
SELECT id, kind, tokens, at, burns_at, note, turn, issue, cost_micros, markup, overdrawn,
    key_index, key_owner, lot
FROM hive.queen_credit_ledger
WHERE account = %(account)s
ORDER BY id DESC
LIMIT %(limit)s;

-- name: credit_accounts
-- Every account that ever moved a token, by name.
SELECT account FROM hive.queen_credit_account ORDER BY account;

-- name: credit_sales_of_issue
-- The sales of one issue's turns, oldest first (its page on the board).
SELECT id, account, tokens, at, turn, cost_micros, overdrawn, key_owner
FROM hive.queen_credit_ledger
WHERE kind = 'sale' AND issue = %(issue)s
ORDER BY id;

-- name: order_credit_terms
-- Whom this attempt's turn is sold to, at what markup, on whose key (NULL account: credits were off when it was written).
SELECT credit_account, credit_markup, key_index, key_owner
FROM hive.queen_dispatch
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s;

-- name: credit_accounts_due
-- The accounts with a lot past its burn time that no burn row has closed yet.
SELECT DISTINCT g.account FROM hive.queen_credit_ledger AS g
WHERE g.kind = 'grant' AND g.burns_at <= %(now)s
  AND NOT EXISTS (
    SELECT 1 FROM hive.queen_credit_ledger AS b WHERE b.kind = 'burn' AND b.lot = g.id
  )
ORDER BY g.account;

-- name: credit_sums
-- The ledger's tokens by kind (hive_credit_tokens_total, read at scrape time).
SELECT kind, sum(tokens) AS tokens FROM hive.queen_credit_ledger GROUP BY kind;
