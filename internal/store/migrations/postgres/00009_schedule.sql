-- +goose Up
-- The schedule slot a target's crawl was last queued for, so that after
-- downtime a missed slot is run once (not once per missed slot) and a slot
-- is never queued twice, whichever serve process holds the schedule.
ALTER TABLE crawl_target ADD COLUMN schedule_slot_at timestamptz;

-- +goose Down
ALTER TABLE crawl_target DROP COLUMN schedule_slot_at;
