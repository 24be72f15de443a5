-- Home reads each of its figures by an index range of its own book; the invoices still owed, by
-- due date (an overdue invoice is one whose due date has passed), had none.
CREATE INDEX invoices_owed_due_idx ON invoices (space_id, due_on)
  WHERE kind = 'invoice' AND status IN ('sent', 'partial');

-- A person's choice to hide the first-steps checklist on a book's Home. One row per book and
-- person; no row: the checklist shows until every step is done.
CREATE TABLE home_checklist_dismissals (
  space_id uuid NOT NULL,
  user_id uuid NOT NULL,
  dismissed_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, user_id),
  FOREIGN KEY (space_id, user_id) REFERENCES members (space_id, user_id) ON DELETE CASCADE
);
