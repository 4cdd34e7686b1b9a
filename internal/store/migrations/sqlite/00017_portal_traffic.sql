-- +goose Up
-- Portal traffic, kept only as long as it takes to tell humans from bots
-- and to tally the humans' card views and click-throughs of a day.
--
-- A visitor is the HMAC-SHA256 of (client address, user agent) under a salt
-- drawn at random for each calendar day (Asia/Shanghai) and kept here so
-- every serve process computes the same key. No address is stored anywhere.
-- When a day is over it is closed: the per-band totals and the humans'
-- per-card tallies are written, then the day's salt, its visitors and their
-- per-card detail are deleted — after that no key can be linked back to an
-- address and what one reader looked at is gone.
CREATE TABLE portal_salt (
    day        TEXT PRIMARY KEY CHECK (length(day) = 10),
    salt       BLOB NOT NULL CHECK (length(salt) = 32),
    created_at TEXT NOT NULL
) STRICT;

-- One visitor on one day: what BotScore reads. Gaps are between
-- navigations (page views and click-throughs), in seconds, kept as a
-- running count, mean and sum of squared deviations (Welford). score is in
-- hundredths (0–100) and band its verdict, both recomputed from the whole
-- row at every update.
CREATE TABLE portal_visitor (
    day            TEXT NOT NULL CHECK (length(day) = 10),
    visitor_key    TEXT NOT NULL CHECK (length(visitor_key) = 64),
    ua_class       TEXT NOT NULL CHECK (ua_class IN ('browser', 'bot')),
    requests       INTEGER NOT NULL DEFAULT 0 CHECK (requests >= 0),
    assets         INTEGER NOT NULL DEFAULT 0 CHECK (assets >= 0),
    pages          INTEGER NOT NULL DEFAULT 0 CHECK (pages >= 0),
    clicks         INTEGER NOT NULL DEFAULT 0 CHECK (clicks >= 0),
    navigations    INTEGER NOT NULL DEFAULT 0 CHECK (navigations >= 0),
    last_nav_at    TEXT,
    gap_count      INTEGER NOT NULL DEFAULT 0 CHECK (gap_count >= 0),
    gap_mean       REAL NOT NULL DEFAULT 0,
    gap_m2         REAL NOT NULL DEFAULT 0 CHECK (gap_m2 >= 0),
    sleep_windows  INTEGER NOT NULL DEFAULT 0 CHECK (sleep_windows >= 0),
    ev_scroll      INTEGER NOT NULL DEFAULT 0 CHECK (ev_scroll >= 0),
    ev_pointer     INTEGER NOT NULL DEFAULT 0 CHECK (ev_pointer >= 0),
    ev_key         INTEGER NOT NULL DEFAULT 0 CHECK (ev_key >= 0),
    ev_click       INTEGER NOT NULL DEFAULT 0 CHECK (ev_click >= 0),
    ev_visibility  INTEGER NOT NULL DEFAULT 0 CHECK (ev_visibility >= 0),
    score          INTEGER NOT NULL DEFAULT 0 CHECK (score >= 0 AND score <= 100),
    band           TEXT NOT NULL CHECK (band IN ('human', 'review', 'bot')),
    PRIMARY KEY (day, visitor_key)
) STRICT;

-- What one visitor viewed and clicked through, per card, until the day is
-- closed; the humans' sum survives in portal_human_tally.
CREATE TABLE portal_visit_card (
    day         TEXT NOT NULL,
    visitor_key TEXT NOT NULL,
    card_id     INTEGER NOT NULL,
    views       INTEGER NOT NULL DEFAULT 0 CHECK (views >= 0),
    clicks      INTEGER NOT NULL DEFAULT 0 CHECK (clicks >= 0),
    PRIMARY KEY (day, visitor_key, card_id),
    FOREIGN KEY (day, visitor_key) REFERENCES portal_visitor (day, visitor_key) ON DELETE CASCADE
) STRICT;

-- A closed day: its tallies are final and its visitors forgotten.
CREATE TABLE portal_day (
    day       TEXT PRIMARY KEY CHECK (length(day) = 10),
    closed_at TEXT NOT NULL
) STRICT;

-- A closed day's visitors, page views and click-throughs per band.
CREATE TABLE portal_day_band (
    day        TEXT NOT NULL REFERENCES portal_day (day),
    band       TEXT NOT NULL CHECK (band IN ('human', 'review', 'bot')),
    visitors   INTEGER NOT NULL CHECK (visitors >= 0),
    page_views INTEGER NOT NULL CHECK (page_views >= 0),
    clicks     INTEGER NOT NULL CHECK (clicks >= 0),
    PRIMARY KEY (day, band)
) STRICT;

-- A closed day's card views and click-throughs by visitors scored human.
-- card_id is not a foreign key: a tally outlives a deleted card.
CREATE TABLE portal_human_tally (
    day     TEXT NOT NULL REFERENCES portal_day (day),
    card_id INTEGER NOT NULL,
    views   INTEGER NOT NULL CHECK (views >= 0),
    clicks  INTEGER NOT NULL CHECK (clicks >= 0),
    PRIMARY KEY (day, card_id)
) STRICT;

-- +goose Down
DROP TABLE portal_human_tally;
DROP TABLE portal_day_band;
DROP TABLE portal_day;
DROP TABLE portal_visit_card;
DROP TABLE portal_visitor;
DROP TABLE portal_salt;
