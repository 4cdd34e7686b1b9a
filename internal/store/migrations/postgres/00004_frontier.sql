-- +goose Up
-- The frontier: every article link a target's lists ever showed, and where
-- it stands (new, fetched, failed with its retry time, gone, disallowed), so
-- a run that stops anywhere loses nothing and the next one resumes. Each
-- list walk is recorded too: a page of known links ends a walk only when
-- the links were settled by a walk that finished.
CREATE TABLE list_walk (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target_id    bigint NOT NULL REFERENCES crawl_target (id),
    full_walk    boolean NOT NULL DEFAULT false,
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz,
    deepest_page int NOT NULL DEFAULT 0 CHECK (deepest_page >= 0),
    reached      varchar(10) CHECK (reached IS NULL OR reached IN ('end', 'known', 'limit')),
    error_msg    text
);
CREATE INDEX list_walk_target_idx ON list_walk (target_id, id);

CREATE TABLE frontier (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target_id       bigint NOT NULL REFERENCES crawl_target (id),
    url             text NOT NULL,
    url_hash        char(64) NOT NULL CHECK (url_hash ~ '^[0-9a-f]{64}$'),
    native_post_id  varchar(64),
    item_json       jsonb NOT NULL DEFAULT '{}',
    state           varchar(12) NOT NULL DEFAULT 'new' CHECK (state IN ('new', 'fetched', 'failed', 'gone', 'disallowed')),
    attempts        int NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    error_class     varchar(40),
    last_error      text,
    next_attempt_at timestamptz,
    discovered_walk bigint NOT NULL DEFAULT 0,
    article_id      bigint REFERENCES article (id),
    discovered_at   timestamptz NOT NULL,
    last_seen_at    timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (target_id, url_hash)
);
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
