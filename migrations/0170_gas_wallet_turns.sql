-- Issue 16: the turns at the gas wallets. A process takes a number from this sequence each time it
-- holds a gas wallet's send lock (in the lock's own statement, once the lock is held). A process
-- whose turn is the one right after its own last turn knows no other process sent from any gas
-- wallet in between, so the nonce after the one it last saw mined is the wallet's next nonce and
-- the node need not be asked for it. A sequence, not a row: its numbers are read past the
-- statement's snapshot (a row would be read as it was before the lock was granted).
CREATE SEQUENCE gas_wallet_turns AS bigint;
