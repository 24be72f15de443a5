-- Webhook delivery: the book's subscriptions (spec §6.2) and one delivery row per event and
-- target, for both channels. An outbox event (0002) becomes deliveries when a worker fans it out;
-- a delivery is then attempted until it is delivered or given up. The delivery row is the journal.

CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  url text NOT NULL,
  -- Empty means every event, including events added later.
  events text[] NOT NULL,
  secret_sealed text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'paused')),
  created_at timestamptz NOT NULL,
  paused_at timestamptz,
  -- The first failed attempt of the current run of failures: since the last success, creation or
  -- resume, with no day-long quiet gap in it. A run a day long pauses the subscription.
  failing_since timestamptz,
  last_failure_at timestamptz,
  last_success_at timestamptz
);
CREATE INDEX webhook_subscriptions_space_idx ON webhook_subscriptions (space_id, created_at);

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  event_id uuid NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
  event text NOT NULL,
  target_kind text NOT NULL CHECK (target_kind IN ('key', 'subscription')),
  key_id uuid REFERENCES integration_keys (id) ON DELETE CASCADE,
  subscription_id uuid REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  -- pending: will be attempted at next_attempt_at; held: waits for its paused subscription to
  -- resume; delivered and given_up are final until someone asks for a retry.
  status text NOT NULL CHECK (status IN ('pending', 'held', 'delivered', 'given_up')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- The attempt after which a failure gives up: the channel's schedule length, or one more than
  -- the attempts made when a person asked for a retry.
  attempts_max integer NOT NULL CHECK (attempts_max >= 1),
  next_attempt_at timestamptz NOT NULL,
  -- A claim: the worker holding lease_token may attempt the delivery until leased_until; after
  -- that (a crashed or stalled worker) another worker may claim it again.
  leased_until timestamptz,
  lease_token uuid,
  last_status_code integer,
  last_error text,
  last_attempt_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  delivered_at timestamptz,
  CHECK ((target_kind = 'key') = (key_id IS NOT NULL)),
  CHECK ((target_kind = 'subscription') = (subscription_id IS NOT NULL))
);
-- Each target gets one delivery per event, however often fan-out runs. The index also serves
-- the cascade when an event is pruned (event_id leads).
CREATE UNIQUE INDEX webhook_deliveries_target_idx
  ON webhook_deliveries (event_id, (COALESCE(key_id, subscription_id)));
-- The claim: due pending rows in time order.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- The journal of one subscription, newest first, and the space-wide tail.
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, created_at, id)
  WHERE subscription_id IS NOT NULL;
CREATE INDEX webhook_deliveries_space_updated_idx ON webhook_deliveries (space_id, updated_at);

-- Events are kept as long as their journal (30 days); the pruning walks them by age.
CREATE INDEX outbox_events_dispatched_age_idx ON outbox_events (created_at) WHERE dispatched_at IS NOT NULL;
