-- +goose Up
-- The last answer the acquisition API (POST /v1/fetch) stored for a URL:
-- its raw body is a blob (raw_path, blobs/ab/cd/<sha256>), so a later
-- request with maxAge is answered from here without asking the site again.
-- One row per requested URL, replaced by each new fetch; gc keeps the blob
-- a row names and collects the ones replaced.
CREATE TABLE fetch_snapshot (
    url          varchar(4096) NOT NULL PRIMARY KEY CHECK (url <> ''),
    final_url    varchar(4096) NOT NULL CHECK (final_url <> ''),
    status       integer NOT NULL CHECK (status BETWEEN 100 AND 599),
    content_type varchar(300) NOT NULL DEFAULT '',
    raw_path     text NOT NULL CHECK (raw_path LIKE 'blobs/%'),
    raw_sha256   char(64) NOT NULL,
    raw_bytes    bigint NOT NULL CHECK (raw_bytes >= 0),
    wire_bytes   bigint NOT NULL DEFAULT 0 CHECK (wire_bytes >= 0),
    duration_ms  bigint NOT NULL DEFAULT 0 CHECK (duration_ms >= 0),
    tier         varchar(20) NOT NULL DEFAULT '',
    fetched_at   timestamptz NOT NULL
);

-- +goose Down
DROP TABLE fetch_snapshot;
