-- +goose Up
-- Stored files (raw HTML, extracted text, attachments) in the database, so
-- that every worker sharing it reads what any other stored, whatever machine
-- it runs on. A blob is named by the SHA-256 of its bytes (the rows of
-- article and attachment keep its path, blobs/ab/cd/<sha256>) and written
-- once. Its bytes are split into parts of 1 MiB, so that neither writing nor
-- reading a 50 MiB attachment holds it whole in one value. stored_at is the
-- last time a crawl stored these bytes: gc removes an unreferenced blob only
-- once that is older than its grace period. Files written to the data
-- directory before this version stay there and are still read.
CREATE TABLE blob (
    sha256     text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size       bigint NOT NULL CHECK (size >= 0),
    chunks     int NOT NULL CHECK (chunks >= 0),
    created_at timestamptz NOT NULL,
    stored_at  timestamptz NOT NULL,
    CHECK (stored_at >= created_at)
);

CREATE TABLE blob_chunk (
    sha256 text NOT NULL REFERENCES blob (sha256) ON DELETE CASCADE,
    seq    int NOT NULL CHECK (seq >= 0),
    data   bytea NOT NULL,
    PRIMARY KEY (sha256, seq)
);

-- +goose Down
DROP TABLE blob_chunk;
DROP TABLE blob;
