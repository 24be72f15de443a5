-- Events written in the same transaction as the change that causes them. Delivery (fan-out to
-- the key's webhook and the book's subscriptions, attempts, journal) belongs to the webhooks
-- feature; this table is only the durable record that something happened.
CREATE TABLE outbox_events (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  channel text NOT NULL CHECK (channel IN ('key', 'book')),
  -- The key channel goes to one integration key's webhook address.
  key_id uuid REFERENCES integration_keys (id) ON DELETE CASCADE,
  event text NOT NULL,
  payload jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  -- Set once the webhooks feature has turned the event into deliveries.
  dispatched_at timestamptz,
  CHECK ((channel = 'key') = (key_id IS NOT NULL))
);
CREATE INDEX outbox_events_pending_idx ON outbox_events (created_at) WHERE dispatched_at IS NULL;
CREATE INDEX outbox_events_space_idx ON outbox_events (space_id, created_at);
