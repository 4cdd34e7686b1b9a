-- +goose Up
-- YAML is the template, the database the runtime truth: a change a person
-- makes in the console to a target is kept here, one row per field, and
-- `config sync` applies it over what the files say instead of resetting
-- it. yaml_value is what the files said at the last sync (NULL for a
-- target created in the console, which has no YAML), so a person sees
-- what a revert would bring back.
CREATE TABLE target_override (
    target_id  INTEGER NOT NULL REFERENCES crawl_target (id),
    field      TEXT NOT NULL CHECK (field <> '' AND length(field) <= 50),
    value      TEXT NOT NULL CHECK (length(value) <= 1000),
    yaml_value TEXT CHECK (length(yaml_value) <= 1000),
    changed_by TEXT NOT NULL CHECK (changed_by <> '' AND length(changed_by) <= 200),
    changed_at TEXT NOT NULL,
    PRIMARY KEY (target_id, field)
) STRICT;

-- Every target keeps its binding, not only those under a site department:
-- city_level and cross_dept both leave dept_id empty, so without it the two
-- cannot be told apart. NULL only for rows no sync has written since.
ALTER TABLE crawl_target ADD COLUMN dept_binding TEXT
    CHECK (dept_binding IS NULL OR dept_binding IN ('mapped', 'city_level', 'cross_dept', 'external_ref'));
-- The catalog row a subscribed target was made from, to trace it back when
-- the CMS changes.
ALTER TABLE crawl_target ADD COLUMN registry_id INTEGER REFERENCES master_column_registry (id);
-- Who created a console target ('' for one written by config sync).
ALTER TABLE crawl_target ADD COLUMN created_by TEXT NOT NULL DEFAULT '' CHECK (length(created_by) <= 200);

UPDATE crawl_target SET dept_binding = (SELECT d.dept_binding FROM site_department d
    WHERE d.id = crawl_target.site_department_id AND d.dept_binding <> 'pending')
    WHERE site_department_id IS NOT NULL;
UPDATE crawl_target SET dept_binding = 'mapped' WHERE site_department_id IS NULL AND dept_id IS NOT NULL;

-- The site department whose index listed the column: a column subscribed
-- from the catalog becomes a target under it and takes its binding.
ALTER TABLE master_column_registry ADD COLUMN site_department_id INTEGER REFERENCES site_department (id);

-- +goose Down
ALTER TABLE master_column_registry DROP COLUMN site_department_id;
ALTER TABLE crawl_target DROP COLUMN created_by;
ALTER TABLE crawl_target DROP COLUMN registry_id;
ALTER TABLE crawl_target DROP COLUMN dept_binding;
DROP TABLE target_override;
