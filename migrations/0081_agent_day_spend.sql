-- Issue 19: what an agent spent in the current UTC day, kept on its own row beside its caps.
-- An x402 quote is then reserved by one guarded UPDATE (the row lock and the cap check in one
-- statement, re-checked against the newest row when it waited for another), instead of a lock,
-- a sum and a write. Every applied spend adds to it and every released one takes it back, in the
-- statement that writes or deletes its agent_spend row (agent_spend keeps what each write spent).
ALTER TABLE agents ADD COLUMN spent_day integer;
ALTER TABLE agents ADD COLUMN spent_usd numeric NOT NULL DEFAULT 0 CHECK (spent_usd >= 0);
-- spent_day counts days since 1970-01-01 (UTC); nothing spent yet means no day.
ALTER TABLE agents ADD CONSTRAINT agents_spent_day_check CHECK (spent_day IS NOT NULL OR spent_usd = 0);
UPDATE agents a
SET spent_day = floor(extract(epoch FROM now()) / 86400)::integer,
    spent_usd = s.total
FROM (
  SELECT agent_id, sum(amount_usd) AS total
  FROM agent_spend
  WHERE floor(extract(epoch FROM spent_at) / 86400) = floor(extract(epoch FROM now()) / 86400)
  GROUP BY agent_id
) s
WHERE s.agent_id = a.id;
