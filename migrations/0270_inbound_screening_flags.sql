-- Where the list that held a payment came from, shown beside the entry it matched.
ALTER TABLE payout_screening_matches ADD COLUMN list_source text NOT NULL DEFAULT '';

-- Screening of money that arrives: a direct transfer into a watched account from a sender on the
-- sanctions list is booked (the money is there) and flagged here, with the list entry it matched
-- as listed, for the Screening page and the owners' notification.
ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_space_id_id_key UNIQUE (space_id, id);

CREATE TABLE inbound_screening_flags (
  space_id uuid NOT NULL REFERENCES spaces (id),
  transfer_id uuid NOT NULL,
  sdn_uid text NOT NULL,
  listed text NOT NULL,
  programs text NOT NULL,
  -- The sender's address as the list holds it (lower case).
  matched text NOT NULL CHECK (matched <> ''),
  -- Where the list that matched came from (its URL or file).
  list_source text NOT NULL,
  flagged_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, transfer_id),
  FOREIGN KEY (space_id, transfer_id) REFERENCES chain_transfers (space_id, id) ON DELETE CASCADE
);

-- The ledger entries a flagged transfer made (the settlements of the requests it filled, the
-- income it left): the Income screen marks each of them.
CREATE TABLE inbound_screening_flag_entries (
  space_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  transfer_id uuid NOT NULL,
  PRIMARY KEY (space_id, entry_id),
  FOREIGN KEY (space_id, transfer_id) REFERENCES inbound_screening_flags (space_id, transfer_id) ON DELETE CASCADE,
  FOREIGN KEY (space_id, entry_id) REFERENCES ledger_entries (space_id, id)
);
CREATE INDEX inbound_screening_flag_entries_transfer_idx ON inbound_screening_flag_entries (space_id, transfer_id);
