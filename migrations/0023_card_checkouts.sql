-- The card rail in production (Stripe Checkout). Applies on top of 0019.

-- A Checkout Session Tollbook opened for a payment request: what it asked Stripe to collect
-- (the open amount, in the currency's minor units), and once paid, the PaymentIntent that
-- took the money, the settlement it booked and how much of it Stripe has refunded since.
CREATE TABLE card_checkouts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  payment_request_id uuid NOT NULL REFERENCES payment_requests (id),
  session_id text NOT NULL UNIQUE,
  currency text NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'paid')),
  payment_intent_id text UNIQUE,
  settlement_id uuid REFERENCES settlements (id),
  paid_amount numeric NOT NULL DEFAULT 0 CHECK (paid_amount >= 0),
  refunded_amount numeric NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0 AND refunded_amount <= paid_amount),
  created_at timestamptz NOT NULL,
  paid_at timestamptz,
  CHECK ((status = 'paid') = (settlement_id IS NOT NULL AND payment_intent_id IS NOT NULL AND paid_at IS NOT NULL))
);
CREATE INDEX card_checkouts_request_idx ON card_checkouts (payment_request_id);

-- A Stripe event whose signature checked and that was acted on: a second delivery of the same
-- event id (Stripe retries, or a replay) finds its row and changes nothing.
CREATE TABLE stripe_events (
  event_id text PRIMARY KEY,
  type text NOT NULL,
  outcome text NOT NULL,
  received_at timestamptz NOT NULL
);
