-- When a key was last used: shown on the Keys screen. Written by the key door at most once a
-- minute per key and process, so a busy key costs one small update a minute, not one a call.
ALTER TABLE integration_keys ADD COLUMN last_used_at TIMESTAMPTZ;
