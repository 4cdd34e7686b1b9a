-- +goose Up
-- The audit trail: one row per change a person or an API key made through
-- the console, the API or the command line — who, what, when, and the
-- object before and after. Rows are only ever added.
CREATE TABLE audit_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL,
    actor       varchar(200) NOT NULL CHECK (actor <> ''),
    action      varchar(100) NOT NULL CHECK (action <> ''),
    object_type varchar(50) NOT NULL DEFAULT '',
    object_id   varchar(200) NOT NULL DEFAULT '',
    before_json jsonb,
    after_json  jsonb,
    detail      varchar(2000) NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_object_idx ON audit_log (object_type, object_id, id);

-- +goose Down
DROP TABLE audit_log;
