-- +goose Up
-- Who may use the console and the API: local users, their sign-in sessions,
-- their API keys, and the failed logins that slow down password guessing.
-- Secrets never reach these tables: a password is kept as its argon2id
-- hash, a session token and an API key as their SHA-256 (hex), so a copy of
-- the database lets nobody sign in.
CREATE TABLE app_user (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      varchar(64) NOT NULL UNIQUE CHECK (username <> ''),
    password_hash text NOT NULL CHECK (substr(password_hash, 1, 10) = '$argon2id$'),
    role          text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    disabled      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    last_login_at timestamptz
);

-- expires_at is absolute (sign-in time plus the session lifetime), the idle
-- timeout is measured from last_seen_at.
CREATE TABLE user_session (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash   char(64) NOT NULL UNIQUE,
    user_id      bigint NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX user_session_user_idx ON user_session (user_id);
CREATE INDEX user_session_expires_idx ON user_session (expires_at);

-- scopes: a comma-separated subset of read, write, export. prefix is the
-- start of the key, enough for a person to tell their keys apart.
CREATE TABLE api_key (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    name         varchar(100) NOT NULL CHECK (name <> ''),
    prefix       varchar(16) NOT NULL CHECK (prefix <> ''),
    key_hash     char(64) NOT NULL UNIQUE,
    scopes       varchar(100) NOT NULL CHECK (scopes <> ''),
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    expires_at   timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_key_user_idx ON api_key (user_id);

-- One row per login attempt that has not succeeded (kind 'user': the
-- username tried, kind 'ip': the client address). Kept in the database so
-- the limit holds across restarts and across processes sharing it.
CREATE TABLE login_failure (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind    text NOT NULL CHECK (kind IN ('user', 'ip')),
    subject varchar(200) NOT NULL CHECK (subject <> ''),
    at      timestamptz NOT NULL
);
CREATE INDEX login_failure_subject_idx ON login_failure (kind, subject, at);
CREATE INDEX login_failure_at_idx ON login_failure (at);

-- +goose Down
DROP TABLE login_failure;
DROP TABLE api_key;
DROP TABLE user_session;
DROP TABLE app_user;
