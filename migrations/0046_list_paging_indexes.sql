-- Issue 17: the app's lists read newest first, 50 a page, by the cursor (created_at, id). Each
-- index below answers one list's page without reading the pages before it.

-- A member's notifications in a book.
CREATE INDEX notifications_member_recent_idx ON notifications (space_id, user_id, created_at DESC, id DESC);
-- A book's keys, revoked and expired ones too.
CREATE INDEX integration_keys_space_recent_idx ON integration_keys (space_id, created_at DESC, id DESC);
-- A book's members (their user id breaks ties).
CREATE INDEX members_space_recent_idx ON members (space_id, created_at DESC, user_id DESC);
-- A book's sites.
CREATE INDEX sites_space_recent_idx ON sites (space_id, created_at DESC, id DESC);
-- A book's accounts (replaces the index on (space_id, created_at), which had no tie-break).
CREATE INDEX accounts_space_recent_idx ON accounts (space_id, created_at DESC, id DESC);
DROP INDEX accounts_space_idx;
-- A book's endpoint cards.
CREATE INDEX resources_space_recent_idx ON resources (space_id, created_at DESC, id DESC);
