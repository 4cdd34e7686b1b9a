-- +goose Up
-- The last answer the acquisition API (POST /v1/fetch) stored for a URL:
-- its raw body is a blob (raw_path, blobs/ab/cd/<sha256>), so a later
-- request with maxAge is answered from here without asking the site again.
-- One row per requested URL, replaced by each new fetch; gc keeps the blob
-- a row names and collects the ones replaced.
CREATE TABLE fetch_snapshot (
    url          TEXT NOT NULL PRIMARY KEY CHECK (url <> '' AND length(url) <= 4096),
    final_url    TEXT NOT NULL CHECK (final_url <> '' AND length(final_url) <= 4096),
    status       INTEGER NOT NULL CHECK (status BETWEEN 100 AND 599),
    content_type TEXT NOT NULL DEFAULT '' CHECK (length(content_type) <= 300),
    raw_path     TEXT NOT NULL CHECK (raw_path LIKE 'blobs/%'),
    raw_sha256   TEXT NOT NULL CHECK (length(raw_sha256) = 64),
    raw_bytes    INTEGER NOT NULL CHECK (raw_bytes >= 0),
    wire_bytes   INTEGER NOT NULL DEFAULT 0 CHECK (wire_bytes >= 0),
    duration_ms  INTEGER NOT NULL DEFAULT 0 CHECK (duration_ms >= 0),
    tier         TEXT NOT NULL DEFAULT '' CHECK (length(tier) <= 20),
    fetched_at   TEXT NOT NULL
) STRICT;

-- +goose Down
DROP TABLE fetch_snapshot;
