-- Issue 17 (page time): a book's payment requests of one status, newest first, by the cursor
-- (created_at, id): the Payment requests screen's Paid and Active filters and the app API's
-- `?status=`. Without it, a filter that matches few of a book's 10,000 requests was answered by
-- reading all of them (7.5 ms of PostgreSQL a page); with it, by the index entries it shows.
CREATE INDEX payment_requests_space_status_recent_idx
  ON payment_requests (space_id, status, created_at DESC, id DESC);
