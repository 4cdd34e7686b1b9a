-- +goose Up
-- The serve processes working this database, each with its last
-- heartbeat. A process registers before it takes its first job and beats
-- every few seconds; one whose beat is too old is taken for dead by the
-- others, which claim its row, hand its running jobs back to the queue
-- and remove the row. A process that stops cleanly removes its own row.
-- id is the process's River client id (river_job.attempted_by).
CREATE TABLE serve_process (
    id          TEXT PRIMARY KEY CHECK (id <> '' AND length(id) <= 100),
    host        TEXT NOT NULL DEFAULT '' CHECK (length(host) <= 255),
    pid         INTEGER NOT NULL DEFAULT 0,
    started_at  TEXT NOT NULL,
    beat_at     TEXT NOT NULL,
    claimed_by  TEXT CHECK (length(claimed_by) <= 100),
    claimed_at  TEXT
) STRICT;

-- +goose Down
DROP TABLE serve_process;
