-- The account watch: per network, the next block to read; per token transfer to a watched
-- address, what it was booked as, so a restart neither loses nor doubles a log and a
-- reorganisation can undo exactly what the transfer booked.

-- `network` in both tables is the chain's key: its CAIP-2 id and genesis block hash, so a
-- development node restarted from scratch (same id, new chain) gets a cursor of its own.
CREATE TABLE chain_cursors (
  network text PRIMARY KEY,
  next_block bigint NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE chain_transfers (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id),
  network text NOT NULL,
  tx_hash text NOT NULL,
  log_index integer NOT NULL,
  block_number bigint NOT NULL,
  block_hash text NOT NULL,
  payer text NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  -- 'watch': booked by the watch (requests filled, remainder as income); 'x402': already booked
  -- by an x402 settlement, followed here only to undo it if the block is reorganised away.
  source text NOT NULL CHECK (source IN ('watch', 'x402')),
  remainder_entry_id uuid REFERENCES ledger_entries (id),
  status text NOT NULL CHECK (status IN ('booked', 'reversed')),
  created_at timestamptz NOT NULL,
  reversed_at timestamptz,
  UNIQUE (network, tx_hash, log_index)
);
CREATE INDEX chain_transfers_recent_idx ON chain_transfers (network, block_number) WHERE status = 'booked';

-- A settlement undone by a reorganisation keeps its row, marked.
ALTER TABLE settlements ADD COLUMN reversed_at timestamptz;
