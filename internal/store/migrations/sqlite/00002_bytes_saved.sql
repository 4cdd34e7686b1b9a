-- +goose Up
-- A 304 saves the body a full answer would have carried: url_state keeps the
-- size of the last full body, crawl_log what each conditional answer saved.
ALTER TABLE url_state ADD COLUMN content_length INTEGER;
ALTER TABLE crawl_log ADD COLUMN bytes_saved INTEGER NOT NULL DEFAULT 0 CHECK (bytes_saved >= 0);

-- +goose Down
ALTER TABLE crawl_log DROP COLUMN bytes_saved;
ALTER TABLE url_state DROP COLUMN content_length;
