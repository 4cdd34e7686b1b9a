-- +goose Up
-- What one API key may spend on the acquisition API per day (a day in
-- China Standard Time, UTC+8), and how many requests it may make per
-- minute. A key without a row has the defaults the budget package names.
-- A limit of 0 allows none of that resource.
CREATE TABLE api_key_budget (
    api_key_id              bigint PRIMARY KEY REFERENCES api_key (id) ON DELETE CASCADE,
    requests_per_day        bigint NOT NULL CHECK (requests_per_day >= 0),
    bytes_per_day           bigint NOT NULL CHECK (bytes_per_day >= 0),
    browser_seconds_per_day bigint NOT NULL CHECK (browser_seconds_per_day >= 0),
    ocr_pages_per_day       bigint NOT NULL CHECK (ocr_pages_per_day >= 0),
    requests_per_minute     bigint NOT NULL CHECK (requests_per_minute >= 0),
    updated_at              timestamptz NOT NULL
);

-- What a key has been charged on a day: the actual cost of every settled
-- request. The row is also what concurrent reservations of the key on that
-- day lock, so no two of them can both take the last unit.
CREATE TABLE budget_usage (
    api_key_id      bigint NOT NULL REFERENCES api_key (id) ON DELETE CASCADE,
    day             date NOT NULL,
    requests        bigint NOT NULL DEFAULT 0 CHECK (requests >= 0),
    bytes           bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
    browser_seconds bigint NOT NULL DEFAULT 0 CHECK (browser_seconds >= 0),
    ocr_pages       bigint NOT NULL DEFAULT 0 CHECK (ocr_pages >= 0),
    PRIMARY KEY (api_key_id, day)
);

-- A request's estimated cost, held against its key's budget between
-- reservation and settlement. A hold past expires_at (its process died
-- before settling) no longer counts and is deleted by the next reservation.
CREATE TABLE budget_hold (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    api_key_id      bigint NOT NULL REFERENCES api_key (id) ON DELETE CASCADE,
    day             date NOT NULL,
    requests        bigint NOT NULL CHECK (requests >= 0),
    bytes           bigint NOT NULL CHECK (bytes >= 0),
    browser_seconds bigint NOT NULL CHECK (browser_seconds >= 0),
    ocr_pages       bigint NOT NULL CHECK (ocr_pages >= 0),
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL
);
CREATE INDEX budget_hold_key_idx ON budget_hold (api_key_id, day, expires_at);

-- Requests of a key in one minute (window_start, a whole UTC minute), for
-- the per-minute rate limit; in the database so the limit holds across
-- every serve process on it.
CREATE TABLE rate_window (
    api_key_id   bigint NOT NULL REFERENCES api_key (id) ON DELETE CASCADE,
    window_start timestamptz NOT NULL,
    requests     bigint NOT NULL CHECK (requests > 0),
    PRIMARY KEY (api_key_id, window_start)
);

-- +goose Down
DROP TABLE rate_window;
DROP TABLE budget_hold;
DROP TABLE budget_usage;
DROP TABLE api_key_budget;
