-- Every logo a book has had, kept by the SHA-256 of its bytes: a sent document names the logo it
-- was sent with (its seller snapshot's logo_sha256), so a later logo never redraws it.
-- seller_logos keeps only which of them is the book's logo now.
CREATE TABLE seller_logo_images (
  space_id uuid NOT NULL REFERENCES spaces (id),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
  bytes bytea NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 1048576),
  width integer NOT NULL CHECK (width BETWEEN 1 AND 512),
  height integer NOT NULL CHECK (height BETWEEN 1 AND 512),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (space_id, sha256)
);

INSERT INTO seller_logo_images (space_id, sha256, content_type, bytes, width, height, created_at)
SELECT space_id, sha256, content_type, bytes, width, height, updated_at FROM seller_logos;

ALTER TABLE seller_logos
  DROP COLUMN content_type,
  DROP COLUMN bytes,
  DROP COLUMN width,
  DROP COLUMN height,
  ADD CONSTRAINT seller_logos_image_fkey FOREIGN KEY (space_id, sha256)
    REFERENCES seller_logo_images (space_id, sha256);
