-- Issue 16 (the charge's database cost): no query of the service finds a ledger entry by its
-- cause. A feature's row names its entry (charges, settlements, invoice payments, pushed rows and
-- agent writes each carry entry_id), and the entry's cause is only shown with it. The index on
-- (space_id, cause_type, cause_id) was written on every entry with a cause (every charge, every
-- settlement), at a random place (the cause is a random id), and read by nothing: it was the
-- largest index of ledger_entries. A person tracing an entry by its cause in psql can still
-- filter by space_id, which ledger_entries_space_idx leads with.
DROP INDEX ledger_entries_cause_idx;
