-- A book's logo, shown on its public pages and available to its documents: a PNG or a JPEG at
-- most 512 pixels on its long side, encoded again from what was uploaded. One per book; it is
-- served by the SHA-256 of its bytes, so a new logo has a new address.
CREATE TABLE seller_logos (
  space_id uuid PRIMARY KEY REFERENCES spaces (id),
  content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
  bytes bytea NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 1048576),
  width integer NOT NULL CHECK (width BETWEEN 1 AND 512),
  height integer NOT NULL CHECK (height BETWEEN 1 AND 512),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  updated_at timestamptz NOT NULL
);
CREATE INDEX seller_logos_sha256_idx ON seller_logos (sha256);
