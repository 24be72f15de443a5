-- The public discovery list reads Findable cards across spaces.
CREATE INDEX resources_findable_idx ON resources (created_at, id) WHERE findable;
