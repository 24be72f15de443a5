-- Money out: payments that leave the book (payouts), the approval and policy rules they pass,
-- the approvals people gave, and the sanctions list they are screened against.

-- An approval rule: a payment of at least min_amount in this currency needs this many approvals
-- from owners or admins other than its maker. The highest matching rule applies. A rule is never
-- edited (a payment keeps the rule it met); removing one marks it removed.
CREATE TABLE approval_rules (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  min_amount numeric NOT NULL CHECK (min_amount >= 0),
  currency text NOT NULL,
  required_approvals integer NOT NULL CHECK (required_approvals BETWEEN 1 AND 5),
  created_by uuid NOT NULL REFERENCES users (id),
  created_at timestamptz NOT NULL,
  removed_at timestamptz,
  UNIQUE (space_id, id)
);
CREATE INDEX approval_rules_space_idx ON approval_rules (space_id, currency) WHERE removed_at IS NULL;

-- A policy rule: a limit a payment must keep, checked at creation and again before execution.
CREATE TABLE policy_rules (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('max_per_payment', 'max_per_day', 'blocked_destination', 'allowed_currencies')),
  amount numeric CHECK (amount > 0),
  currency text,
  destination text,
  currencies text[],
  created_by uuid NOT NULL REFERENCES users (id),
  created_at timestamptz NOT NULL,
  removed_at timestamptz,
  CHECK (
    CASE kind
      WHEN 'max_per_payment' THEN amount IS NOT NULL AND currency IS NOT NULL
      WHEN 'max_per_day' THEN amount IS NOT NULL AND currency IS NOT NULL
      WHEN 'blocked_destination' THEN destination IS NOT NULL AND destination <> ''
      ELSE currencies IS NOT NULL AND cardinality(currencies) > 0
    END
  )
);
CREATE INDEX policy_rules_space_idx ON policy_rules (space_id, kind) WHERE removed_at IS NULL;

-- A payment out of one of the book's accounts, from its creation to its execution on a rail.
CREATE TABLE payouts (
  id uuid PRIMARY KEY,
  space_id uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id),
  maker_id uuid NOT NULL REFERENCES users (id),
  amount numeric NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  rail text NOT NULL CHECK (rail IN ('book', 'bank', 'chain')),
  payee text NOT NULL,
  -- chain: the lower-case address; bank: the requisites' account (IBAN or number); book: ''.
  destination text NOT NULL DEFAULT '',
  requisites jsonb,
  contact_id uuid REFERENCES contacts (id),
  note text NOT NULL DEFAULT '',
  occurred_on date NOT NULL,
  status text NOT NULL CHECK (status IN (
    'awaiting_approval', 'approved', 'executing', 'executed', 'blocked', 'rejected', 'failed', 'cancelled'
  )),
  -- The approvals the payment needs: fixed by the rule it met when it entered approval.
  approval_rule_id uuid REFERENCES approval_rules (id),
  required_approvals integer NOT NULL DEFAULT 0 CHECK (required_approvals BETWEEN 0 AND 5),
  blocked_reason text,
  release_reason text,
  released_by uuid REFERENCES users (id),
  reject_reason text,
  rejected_by uuid REFERENCES users (id),
  reference text,
  transaction_id uuid REFERENCES ledger_entries (id),
  tx_hash text,
  created_at timestamptz NOT NULL,
  approved_at timestamptz,
  executed_at timestamptz,
  updated_at timestamptz NOT NULL,
  UNIQUE (space_id, id),
  CHECK (status <> 'blocked' OR blocked_reason IS NOT NULL),
  CHECK (status <> 'executed' OR (transaction_id IS NOT NULL AND executed_at IS NOT NULL))
);
CREATE INDEX payouts_space_idx ON payouts (space_id, created_at DESC, id DESC);
CREATE INDEX payouts_status_idx ON payouts (space_id, status, created_at DESC, id DESC);
-- The day's total for max_per_day reads the payments approved that day that went on to leave.
CREATE INDEX payouts_day_idx ON payouts (space_id, currency, approved_at) WHERE status IN ('approved', 'executing', 'executed');
CREATE UNIQUE INDEX payouts_one_tx ON payouts (tx_hash) WHERE tx_hash IS NOT NULL;

-- One approval per person per payment.
CREATE TABLE payout_approvals (
  space_id uuid NOT NULL,
  payout_id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (payout_id, user_id),
  FOREIGN KEY (space_id, payout_id) REFERENCES payouts (space_id, id) ON DELETE CASCADE
);

-- A sanctions list the operator loaded (OFAC's SDN.XML). The current one is the one screened
-- against; older ones keep their metadata, their entries are dropped.
CREATE TABLE screening_lists (
  id uuid PRIMARY KEY,
  source text NOT NULL,
  published_on text NOT NULL,
  entries integer NOT NULL CHECK (entries >= 0),
  is_current boolean NOT NULL,
  loaded_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX screening_lists_one_current ON screening_lists (is_current) WHERE is_current;

-- One thing to match: a normalised name (tokens sorted) or a lower-case chain address.
CREATE TABLE screening_entries (
  list_id uuid NOT NULL REFERENCES screening_lists (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('name', 'address')),
  value text NOT NULL CHECK (value <> ''),
  sdn_uid text NOT NULL
);
CREATE INDEX screening_entries_value_idx ON screening_entries (value, kind, list_id);
