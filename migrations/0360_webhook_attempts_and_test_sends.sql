-- One attempt at sending a webhook delivery: when it was made, what came back (the answer's
-- status, or the error when no answer came), how long it took and the first 2 KB of the answer's
-- body as text. Written in the statement that records the attempt on its delivery, and only when
-- the recorder still held the delivery's lease; it goes when its delivery goes.
CREATE TABLE webhook_delivery_attempts (
  space_id uuid NOT NULL REFERENCES spaces (id),
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL CHECK (attempt >= 1),
  attempted_at timestamptz NOT NULL,
  status_code integer,
  error text,
  -- Null when nothing was sent (a revoked key, a secret that cannot be opened).
  duration_ms integer CHECK (duration_ms >= 0),
  -- Null when no answer came back.
  response_excerpt text CHECK (char_length(response_excerpt) <= 2048),
  PRIMARY KEY (space_id, delivery_id, attempt),
  CHECK (status_code IS NOT NULL OR error IS NOT NULL)
);
CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, attempt);

-- A "Send test" of a subscription (the webhook.test event, sent once, never retried): when, the
-- event id sent, the answer's status or the error, the duration and the first 2 KB of the answer.
-- Listed in the subscription's journal; kept as long as the journal keeps deliveries.
CREATE TABLE webhook_test_sends (
  space_id uuid NOT NULL REFERENCES spaces (id),
  id uuid NOT NULL,
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  url text NOT NULL,
  sent_at timestamptz NOT NULL,
  delivered boolean NOT NULL,
  status_code integer,
  error text,
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  response_excerpt text CHECK (char_length(response_excerpt) <= 2048),
  PRIMARY KEY (space_id, id),
  CHECK (status_code IS NOT NULL OR error IS NOT NULL)
);
CREATE INDEX webhook_test_sends_subscription_idx ON webhook_test_sends (subscription_id, sent_at DESC);
CREATE INDEX webhook_test_sends_sent_idx ON webhook_test_sends (sent_at);
