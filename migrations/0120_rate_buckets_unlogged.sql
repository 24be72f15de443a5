-- Issue 19 (agents benchmark): rate buckets are counters of the last minute, kept in the database
-- so every server process sees the same numbers (as Redis would keep them), not records anyone
-- needs after a crash. Unlogged, a call's count writes no WAL and its commit waits for no flush;
-- a crash empties the table, which forgets at most the last 70 seconds of calls.
ALTER TABLE rate_buckets SET UNLOGGED;
