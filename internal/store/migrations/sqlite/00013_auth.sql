-- +goose Up
-- Who may use the console and the API: local users, their sign-in sessions,
-- their API keys, and the failed logins that slow down password guessing.
-- Secrets never reach these tables: a password is kept as its argon2id
-- hash, a session token and an API key as their SHA-256 (hex), so a copy of
-- the database lets nobody sign in.
CREATE TABLE app_user (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE CHECK (username <> '' AND length(username) <= 64),
    password_hash TEXT NOT NULL CHECK (substr(password_hash, 1, 10) = '$argon2id$'),
    role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    last_login_at TEXT
) STRICT;

-- expires_at is absolute (sign-in time plus the session lifetime), the idle
-- timeout is measured from last_seen_at.
CREATE TABLE user_session (
    id           INTEGER PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    user_id      INTEGER NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL
) STRICT;
CREATE INDEX user_session_user_idx ON user_session (user_id);
CREATE INDEX user_session_expires_idx ON user_session (expires_at);

-- scopes: a comma-separated subset of read, write, export. prefix is the
-- start of the key, enough for a person to tell their keys apart.
CREATE TABLE api_key (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    name         TEXT NOT NULL CHECK (name <> '' AND length(name) <= 100),
    prefix       TEXT NOT NULL CHECK (prefix <> '' AND length(prefix) <= 16),
    key_hash     TEXT NOT NULL UNIQUE CHECK (length(key_hash) = 64),
    scopes       TEXT NOT NULL CHECK (scopes <> '' AND length(scopes) <= 100),
    created_at   TEXT NOT NULL,
    last_used_at TEXT,
    expires_at   TEXT,
    revoked_at   TEXT
) STRICT;
CREATE INDEX api_key_user_idx ON api_key (user_id);

-- One row per login attempt that has not succeeded (kind 'user': the
-- username tried, kind 'ip': the client address). Kept in the database so
-- the limit holds across restarts and across processes sharing it.
CREATE TABLE login_failure (
    id      INTEGER PRIMARY KEY,
    kind    TEXT NOT NULL CHECK (kind IN ('user', 'ip')),
    subject TEXT NOT NULL CHECK (subject <> '' AND length(subject) <= 200),
    at      TEXT NOT NULL
) STRICT;
CREATE INDEX login_failure_subject_idx ON login_failure (kind, subject, at);
CREATE INDEX login_failure_at_idx ON login_failure (at);

-- +goose Down
DROP TABLE login_failure;
DROP TABLE api_key;
DROP TABLE user_session;
DROP TABLE app_user;
