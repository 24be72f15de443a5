-- How a book's pages write moments and numbers for people: an IANA time zone and a BCP 47
-- locale, both checked by the service with Intl (a rule the database cannot say); the books made
-- before these columns read in UTC and English.
ALTER TABLE spaces ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC' CHECK (length(time_zone) BETWEEN 1 AND 64);
ALTER TABLE spaces ADD COLUMN locale text NOT NULL DEFAULT 'en' CHECK (length(locale) BETWEEN 2 AND 35);
