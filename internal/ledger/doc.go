// Package ledger owns zhizhi's two public ledgers — the crawler's requests
// to the source sites, and the humans' card views and click-throughs on the
// public portal — and what keeps them apart and honest:
//
//   - BotScore tells a portal visitor who reads from one that scripts;
//     visitors are keyed by a salted HMAC that is forgotten with its day,
//     and only per-card tallies of the visitors scored human are kept.
//   - The day seal: every calendar day (Asia/Shanghai) the crawler's
//     requests and the human tallies are frozen into two RFC 6962 Merkle
//     trees; the day's head H_n = SHA-256(H_{n−1} ‖ date ‖ human root ‖
//     crawler root) chains it to the day before, and an ed25519-signed note
//     states it. Anyone holding an export and the public verifier key can
//     check every record against the signed root without the database; the
//     export carries statistics only, never who read or clicked what.
//   - The dashboard: each day's numbers from both ledgers side by side,
//     never summed into one.
package ledger
