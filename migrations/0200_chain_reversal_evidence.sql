-- A booked transfer or an executed chain payment is undone only on evidence seen twice: the
-- first round that finds its transaction gone records the head of the node that said so; a later
-- round, at a head at least one block past it, undoes it. A round that finds it again clears it.
ALTER TABLE chain_transfers ADD COLUMN suspect_since_block bigint;

-- An executed chain payment whose transaction a node said was gone, and the node's head then.
CREATE TABLE payout_chain_suspects (
  payout_id uuid PRIMARY KEY,
  space_id uuid NOT NULL,
  since_block bigint NOT NULL CHECK (since_block >= 0),
  CONSTRAINT payout_chain_suspects_payout_id_fkey FOREIGN KEY (space_id, payout_id)
    REFERENCES payouts (space_id, id)
);

-- A transfer reversed by a reorganisation and mined again later is booked again as a new row
-- that names the reversed one (once: UNIQUE). The reversed row keeps its history, so one
-- transaction log may have several rows, of which at most one is booked.
ALTER TABLE chain_transfers ADD COLUMN rebooks uuid UNIQUE REFERENCES chain_transfers (id);
ALTER TABLE chain_transfers DROP CONSTRAINT chain_transfers_network_tx_hash_log_index_key;
CREATE UNIQUE INDEX chain_transfers_booked_once ON chain_transfers (network, tx_hash, log_index)
  WHERE status = 'booked';
CREATE INDEX chain_transfers_reversed_idx ON chain_transfers (network, block_number)
  WHERE status = 'reversed';
