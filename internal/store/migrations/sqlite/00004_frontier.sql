-- +goose Up
-- The frontier: every article link a target's lists ever showed, and where
-- it stands (new, fetched, failed with its retry time, gone, disallowed), so
-- a run that stops anywhere loses nothing and the next one resumes. Each
-- list walk is recorded too: a page of known links ends a walk only when
-- the links were settled by a walk that finished.
CREATE TABLE list_walk (
    id           INTEGER PRIMARY KEY,
    target_id    INTEGER NOT NULL REFERENCES crawl_target (id),
    full_walk    INTEGER NOT NULL DEFAULT 0 CHECK (full_walk IN (0, 1)),
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    deepest_page INTEGER NOT NULL DEFAULT 0 CHECK (deepest_page >= 0),
    reached      TEXT CHECK (reached IS NULL OR reached IN ('end', 'known', 'limit')),
    error_msg    TEXT
) STRICT;
CREATE INDEX list_walk_target_idx ON list_walk (target_id, id);

CREATE TABLE frontier (
    id              INTEGER PRIMARY KEY,
    target_id       INTEGER NOT NULL REFERENCES crawl_target (id),
    url             TEXT NOT NULL,
    url_hash        TEXT NOT NULL CHECK (length(url_hash) = 64 AND url_hash NOT GLOB '*[^0-9a-f]*'),
    native_post_id  TEXT,
    item_json       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(item_json)),
    state           TEXT NOT NULL DEFAULT 'new' CHECK (state IN ('new', 'fetched', 'failed', 'gone', 'disallowed')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    error_class     TEXT,
    last_error      TEXT,
    next_attempt_at TEXT,
    discovered_walk INTEGER NOT NULL DEFAULT 0,
    article_id      INTEGER REFERENCES article (id),
    discovered_at   TEXT NOT NULL,
    last_seen_at    TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (target_id, url_hash)
) STRICT;
CREATE INDEX frontier_due_idx ON frontier (target_id, state, next_attempt_at);

-- Articles stored before the frontier existed are its first entries. They
-- count as settled only once a walk has finished (discovered_walk 0).
INSERT INTO frontier (target_id, url, url_hash, native_post_id, state, article_id, discovered_walk,
    discovered_at, last_seen_at, updated_at)
SELECT target_id, url, url_hash, native_post_id,
    CASE WHEN status = 'ready' THEN 'fetched' ELSE 'failed' END, id, 0, created_at, updated_at, updated_at
FROM article;

-- +goose Down
DROP TABLE frontier;
DROP TABLE list_walk;
