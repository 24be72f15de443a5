-- A rotated webhook secret keeps signing beside the new one until `previous_secret_until`, so a
-- receiver can switch secrets without a gap. Both columns are set together or not at all.
ALTER TABLE webhook_subscriptions
  ADD COLUMN previous_secret_sealed text,
  ADD COLUMN previous_secret_until timestamptz,
  ADD CONSTRAINT webhook_subscriptions_previous_secret_check
    CHECK ((previous_secret_sealed IS NULL) = (previous_secret_until IS NULL));

ALTER TABLE integration_keys
  ADD COLUMN previous_webhook_secret_sealed text,
  ADD COLUMN previous_webhook_secret_until timestamptz,
  ADD CONSTRAINT integration_keys_previous_webhook_secret_check
    CHECK ((previous_webhook_secret_sealed IS NULL) = (previous_webhook_secret_until IS NULL));
