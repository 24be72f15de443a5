-- A chain rail's mark on an executed payment is keyed by its book as well, like every per-book
-- table, so the table can be distributed by space_id beside the payments it marks.
ALTER TABLE payout_chain_suspects DROP CONSTRAINT payout_chain_suspects_pkey;
ALTER TABLE payout_chain_suspects ADD PRIMARY KEY (space_id, payout_id);
