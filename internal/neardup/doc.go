// Package neardup finds stored 64-bit simhash fingerprints within a small
// Hamming distance (at most 3) of a query, without reading every stored
// fingerprint. It holds only ids and fingerprints in memory; loading them
// from the store and deciding what a match means are the caller's jobs.
//
// # How a query avoids a scan
//
// The 64 bits are cut into 4 blocks of 16 bits. Two fingerprints that
// differ in at most 3 bits differ in at most 3 blocks, so at least one
// block is identical in both. The index keeps 4 tables, one per block:
// table i holds every fingerprint with its bits rearranged so that block i
// comes first, ordered by those leading 16 bits. A query rearranges itself
// the same way for each table, goes straight to the run of rows that share
// its leading 16 bits, and compares each of them in full (XOR and bit
// count; rearranging bits does not change a distance). Every fingerprint
// within distance 3 is in one of those four runs, so the answer is exact.
// The order inside a table is kept by a counting sort on the leading bits
// with a directory of where each run starts, so a probe is one look-up,
// not a binary search.
//
// # Why 4 blocks of 16
//
// More blocks give longer leading keys and fewer rows per run, at the
// price of more tables: with b blocks a fingerprint must agree on b-3 of
// them, so there are "b choose 3" tables. Each table row takes 12 bytes
// (the rearranged fingerprint and its position), on top of 16 bytes for
// the id and fingerprint themselves. The three layouts, measured side by
// side on random fingerprints (TestNearDupLatencyReport; docs/performance.md
// has the whole table and the machine):
//
//	layout                  tables  bytes/fp  rows read/query  median query   index size
//	                                           1M     10M      1M     10M     1M       10M
//	4 blocks of 16             4      64-65     61     611   2.7µs  12.5µs   62 MiB   613 MiB
//	5 blocks of 13,13,..,12   10     147-153    40      26   4.6µs  23.2µs  140 MiB   1.4 GiB
//	6 blocks of 11,11,..,10   20     278-290    81      52  10.1µs  30.9µs  265 MiB   2.7 GiB
//
// (a linear scan took 0.59 ms and 6.1 ms). With 5 or 6 blocks the keys are
// 25 to 33 bits long and a run of equal keys would almost always hold no
// or one fingerprint; their directories are cut to two to four rows per run
// (one or two bytes per fingerprint per table), which is why they still read a few
// dozen rows. What a query costs is not the rows it compares, which lie
// side by side and take about a nanosecond each, but the number of
// separate places in memory it has to fetch from: the directory entry and
// the run of each table, a few cache misses per table. Four tables mean
// the fewest misses, so the 4-block layout answered fastest at both sizes
// (5 blocks took 1.7 to 1.9 times as long at the median, 6 blocks 2.5 to
// 3.8 times) while holding less than half and a quarter of their memory:
// about 64 bytes per fingerprint. It also builds fastest (0.4 s at 1M,
// 3 s at 10M, against 33 s for 5 blocks at 10M, whose 16 MiB
// directories no longer fit in the cache while they are filled).
//
// Its cost grows with the collection: a run holds n/65,536 rows, 15 at 1M
// and 153 at 10M, so a query compares about 61 and 611 rows. At 100M it
// would compare about 6,100 rows (48 KiB) per query; that is where 5
// blocks (10 tables, about 15 GB) would start to pay, if memory allows.
//
// # Changes after the start
//
// Build loads everything at once: one pass if the ids arrive in ascending
// order (otherwise one sort), then a counting sort per table, no insertion
// row by row. Add puts a fingerprint in a small unsorted list that every
// query reads in full; when the list reaches 256 it becomes a small
// segment with tables of its own, and the newest segments are merged
// whenever the newer one has grown to half the size of the one before. A
// fingerprint is therefore copied O(log n) times over its life, and the
// big loaded segment is rebuilt only after between half and all of its own
// size has been added again. Remove marks a row dead; a segment is rebuilt without
// its dead rows once more than half of them are dead. Adding an id that
// is already stored replaces its fingerprint.
//
// Queries run concurrently with each other and with one writer at a time.
// Segments never change once built, apart from their deletion marks, so a
// writer builds new segments while queries go on and holds them off only
// for the moment it takes to swap them in.
//
// A query with k above 3 is answered exactly by reading every fingerprint;
// the tables cannot answer it.
package neardup
