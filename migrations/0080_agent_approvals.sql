-- Issue 19: approving a proposal whose applying is chain I/O (a hot-wallet transfer, an x402
-- fetch). The person claims the proposal first (status approving, with who and since when), so
-- two approvals at once apply it once; the transfer or the fetch then runs outside any
-- transaction; the outcome is recorded after it: approved with its result, or back to pending
-- with the failure in `result` for the owner to read (and approve again or reject).
ALTER TABLE agent_writes DROP CONSTRAINT agent_writes_status_check;
ALTER TABLE agent_writes ADD CONSTRAINT agent_writes_status_check CHECK (
  status IN ('applied', 'pending', 'approved', 'rejected', 'lapsed', 'sending', 'failed', 'approving')
);
-- An approving proposal names who claimed it, as a decided one names who decided.
ALTER TABLE agent_writes DROP CONSTRAINT agent_writes_check;
ALTER TABLE agent_writes ADD CONSTRAINT agent_writes_decided_by_check CHECK (
  (status IN ('approved', 'rejected', 'approving')) = (decided_by IS NOT NULL)
);
