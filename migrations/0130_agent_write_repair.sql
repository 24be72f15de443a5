-- Issue 19: the repair of an agent write left in sending or approving by a process that died
-- between claiming it and recording its outcome. Every such write moves money by an EIP-3009
-- authorization signed with the agent's own key. Its network, nonce, amount (base units) and end
-- of validity are recorded on the write before the signed authorization leaves the process (to
-- the gas wallet, or in an x402 payment header): the token's authorizationState(wallet, nonce)
-- then says for good whether it moved the money, and once a block at or past valid_before is
-- mined it never can. The repair job reads the chain and books the write once, or releases it.
ALTER TABLE agent_writes ADD COLUMN signed_network text;
ALTER TABLE agent_writes ADD COLUMN signed_nonce text CHECK (signed_nonce ~ '^0x[0-9a-f]{64}$');
ALTER TABLE agent_writes ADD COLUMN signed_value numeric CHECK (signed_value > 0 AND signed_value = trunc(signed_value));
ALTER TABLE agent_writes ADD COLUMN signed_valid_before timestamptz;
-- The four are recorded together or not at all.
ALTER TABLE agent_writes ADD CONSTRAINT agent_writes_signed_check CHECK (
  (signed_network IS NULL) = (signed_nonce IS NULL)
  AND (signed_nonce IS NULL) = (signed_value IS NULL)
  AND (signed_value IS NULL) = (signed_valid_before IS NULL)
);
-- A nonce is drawn at random for each authorization: one write per nonce.
CREATE UNIQUE INDEX agent_writes_signed_nonce_key ON agent_writes (signed_nonce) WHERE signed_nonce IS NOT NULL;
-- The repair job's search: the writes still on their way.
CREATE INDEX agent_writes_in_flight_idx ON agent_writes (created_at) WHERE status IN ('sending', 'approving');
-- Writes already on their way when this migration runs recorded no authorization: the repair
-- cannot tell from the chain whether they moved money, so it leaves them to an operator.
ALTER TABLE agent_writes ADD COLUMN in_flight_before_repair boolean NOT NULL DEFAULT false;
UPDATE agent_writes SET in_flight_before_repair = true WHERE status IN ('sending', 'approving');
