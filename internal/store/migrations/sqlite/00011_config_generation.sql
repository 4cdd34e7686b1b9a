-- +goose Up
-- How many times `config sync` has written the configuration. Every serve
-- process compares it with the generation it loaded, so a sync reaches
-- all of them — on one machine or several — without a restart. One row.
CREATE TABLE config_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL CHECK (generation >= 0),
    synced_at  TEXT
) STRICT;
INSERT INTO config_generation (id, generation) VALUES (1, 0);

-- +goose Down
DROP TABLE config_generation;
