-- +goose Up
-- With PostgreSQL this version moves stored files into the database, so that
-- several workers on several machines share them. An SQLite file is shared
-- only by processes on one machine: the files stay in the data directory
-- (blobs/ab/cd/<sha256>) and nothing changes. This file keeps the two
-- dialects' versions in step.
SELECT 1;

-- +goose Down
SELECT 1;
