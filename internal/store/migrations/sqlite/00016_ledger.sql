-- +goose Up
-- The day seal: each calendar day (Asia/Shanghai) of the two ledgers — the
-- crawler's requests and the per-card tallies of human readers — is copied
-- here once the day is over, with the Merkle tree hashes that prove each
-- record's place, and chained to the day before by a signed head. Rows are
-- only ever added; `zhizhi audit verify` finds any later change.

-- The one signing key (id is always 1), so that every process sharing the
-- database signs with the same key. Keys are encoded as text by Go's
-- golang.org/x/mod/sumdb/note.
CREATE TABLE ledger_key (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    signer_key   TEXT NOT NULL CHECK (signer_key <> ''),
    verifier_key TEXT NOT NULL CHECK (verifier_key <> ''),
    created_at   TEXT NOT NULL
) STRICT;

-- Hashes are lower-case hex of 32 bytes; a day with no records has the
-- empty tree's root (SHA-256 of nothing, as RFC 6962 defines it).
CREATE TABLE ledger_day (
    day           TEXT PRIMARY KEY CHECK (date(day) IS day),
    prev_head     TEXT NOT NULL CHECK (length(prev_head) = 64 AND prev_head NOT GLOB '*[^0-9a-f]*'),
    human_count   INTEGER NOT NULL CHECK (human_count >= 0),
    human_root    TEXT NOT NULL CHECK (length(human_root) = 64 AND human_root NOT GLOB '*[^0-9a-f]*'),
    crawler_count INTEGER NOT NULL CHECK (crawler_count >= 0),
    crawler_root  TEXT NOT NULL CHECK (length(crawler_root) = 64 AND crawler_root NOT GLOB '*[^0-9a-f]*'),
    head          TEXT NOT NULL CHECK (length(head) = 64 AND head NOT GLOB '*[^0-9a-f]*'),
    note          TEXT NOT NULL CHECK (note <> ''),
    sealed_at     TEXT NOT NULL
) STRICT;

-- One canonical JSON line per record, seq counting from 0 within a day's
-- ledger.
CREATE TABLE ledger_record (
    day    TEXT NOT NULL REFERENCES ledger_day (day),
    ledger TEXT NOT NULL CHECK (ledger IN ('human', 'crawler')),
    seq    INTEGER NOT NULL CHECK (seq >= 0),
    data   TEXT NOT NULL,
    PRIMARY KEY (day, ledger, seq)
) STRICT;

-- The stored hashes of each day's tree (tlog's numbering), from which an
-- inclusion proof for any record is read.
CREATE TABLE ledger_hash (
    day    TEXT NOT NULL REFERENCES ledger_day (day),
    ledger TEXT NOT NULL CHECK (ledger IN ('human', 'crawler')),
    idx    INTEGER NOT NULL CHECK (idx >= 0),
    hash   TEXT NOT NULL CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
    PRIMARY KEY (day, ledger, idx)
) STRICT;

-- +goose Down
DROP TABLE ledger_hash;
DROP TABLE ledger_record;
DROP TABLE ledger_day;
DROP TABLE ledger_key;
