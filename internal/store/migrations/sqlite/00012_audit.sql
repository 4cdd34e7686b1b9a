-- +goose Up
-- The audit trail: one row per change a person or an API key made through
-- the console, the API or the command line — who, what, when, and the
-- object before and after. Rows are only ever added.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL CHECK (actor <> '' AND length(actor) <= 200),
    action      TEXT NOT NULL CHECK (action <> '' AND length(action) <= 100),
    object_type TEXT NOT NULL DEFAULT '' CHECK (length(object_type) <= 50),
    object_id   TEXT NOT NULL DEFAULT '' CHECK (length(object_id) <= 200),
    before_json TEXT CHECK (before_json IS NULL OR json_valid(before_json)),
    after_json  TEXT CHECK (after_json IS NULL OR json_valid(after_json)),
    detail      TEXT NOT NULL DEFAULT '' CHECK (length(detail) <= 2000)
) STRICT;
CREATE INDEX audit_log_object_idx ON audit_log (object_type, object_id, id);

-- +goose Down
DROP TABLE audit_log;
