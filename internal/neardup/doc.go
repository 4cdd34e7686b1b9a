// Package neardup finds stored 64-bit simhash fingerprints within a small
// Hamming distance (at most 3) of a query, with permuted sorted tables
// instead of a scan of every fingerprint. It holds only ids and
// fingerprints in memory; loading them from the store is the caller's job.
package neardup
