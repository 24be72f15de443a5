-- Home's open payment requests (how many, and what they still wait for, per currency) read a
-- few rows a book instead of every active request. Two tables hold the sums together, as the
-- income days do: every write that changes a request's share (a mint, a receipt, a cancel, a
-- lapse) adds one row to payment_request_open_arrivals in its own transaction (a plain insert,
-- so a busy account makes no hot row), and a periodic task moves those rows into
-- payment_request_open_totals in one statement (delete and add at once). The sums count every
-- active request, lapsed or not; a reader takes off the active requests already past their
-- deadline (the lapse job's backlog), read through payment_requests_lapsed_open_idx.

-- One write's change to its book's open sums in the request's currency.
CREATE TABLE payment_request_open_arrivals (
  space_id uuid NOT NULL,
  id uuid NOT NULL,
  payment_request_id uuid NOT NULL,
  currency text NOT NULL,
  requests integer NOT NULL CHECK (requests BETWEEN -1 AND 1),
  open numeric NOT NULL,
  CHECK (requests <> 0 OR open <> 0),
  PRIMARY KEY (space_id, id),
  FOREIGN KEY (space_id, payment_request_id) REFERENCES payment_requests (space_id, id)
);

-- A book's active requests in one currency: how many, and what they still wait for. Either may
-- dip below zero for a moment: settling takes arrivals in no particular order, so a request's
-- cancel can be moved before its mint. The two tables' sum never does.
CREATE TABLE payment_request_open_totals (
  space_id uuid NOT NULL REFERENCES spaces (id),
  currency text NOT NULL,
  requests bigint NOT NULL,
  open numeric NOT NULL,
  PRIMARY KEY (space_id, currency)
);

-- The requests already active, summed once.
INSERT INTO payment_request_open_totals (space_id, currency, requests, open)
SELECT space_id, currency, COUNT(*), SUM(GREATEST(amount_due - amount_received, 0))
FROM payment_requests WHERE status = 'active'
GROUP BY space_id, currency;

-- The active requests of a book past their deadline come first in a book's range: readers take
-- them off the sums without reading the book's other active requests.
DROP INDEX payment_requests_open_totals_idx;
CREATE INDEX payment_requests_lapsed_open_idx
  ON payment_requests (space_id, expires_at) INCLUDE (currency, amount_due, amount_received)
  WHERE status = 'active';
