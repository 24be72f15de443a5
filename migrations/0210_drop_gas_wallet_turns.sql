-- The gas wallet's sender asks the node for the next nonce while it holds the wallet's lock, so
-- no process numbers its turns at the wallet any more: the sequence that did goes.
DROP SEQUENCE IF EXISTS gas_wallet_turns;
