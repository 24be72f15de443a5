-- Income per day, pre-summed, so Home's money in and the Income screen read a few rows a day
-- instead of every income posting. Two tables hold the figure together: a posting on an income
-- account adds one row to ledger_income_arrivals in the statement that files it (a plain insert,
-- so a busy account makes no hot row), and a periodic task moves those rows into
-- ledger_income_days in one statement (delete and add at once). A read that sums both tables in
-- one statement therefore sees every income posting exactly once, whenever it runs.

-- One income posting's contribution not yet moved into its day: an entry's postings on one
-- income account and currency, summed (an entry normally has one).
CREATE TABLE ledger_income_arrivals (
  space_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  ledger_account_id uuid NOT NULL,
  currency text NOT NULL,
  day date NOT NULL,
  amount numeric NOT NULL,
  PRIMARY KEY (space_id, entry_id, ledger_account_id, currency),
  FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id),
  FOREIGN KEY (space_id, ledger_account_id, currency) REFERENCES ledger_accounts (space_id, id, currency)
);

-- One income account's postings on one day in one currency, summed (signed as the postings are:
-- income is a credit, so money in is negative here), and how many entries made them.
CREATE TABLE ledger_income_days (
  space_id uuid NOT NULL,
  day date NOT NULL,
  ledger_account_id uuid NOT NULL,
  currency text NOT NULL,
  amount numeric NOT NULL,
  entries bigint NOT NULL CHECK (entries > 0),
  PRIMARY KEY (space_id, day, ledger_account_id, currency),
  FOREIGN KEY (space_id, ledger_account_id, currency) REFERENCES ledger_accounts (space_id, id, currency)
);

-- The postings already filed, summed once.
INSERT INTO ledger_income_days (space_id, day, ledger_account_id, currency, amount, entries)
SELECT p.space_id, p.occurred_on, p.ledger_account_id, p.currency, SUM(p.amount), COUNT(DISTINCT p.entry_id)
FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.ledger_account_id
WHERE a.kind = 'income'
GROUP BY p.space_id, p.occurred_on, p.ledger_account_id, p.currency;
