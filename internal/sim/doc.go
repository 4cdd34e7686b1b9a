// Package sim owns the simulated government web: deterministic local sites on
// loopback that behave like the real portals zhizhi collects from.
// It serves a gkmlpt city portal behind a JavaScript cookie challenge, gkmlpt
// county sites, a GB18030 template site, provincial and national reference
// sites and a news site, each with its own listener; a control host exposes
// the ground truth, the sim clock, fault injection and a per-host access log.
// Options.Counties adds up to 200 generated county sites of the gkmlpt and
// template kinds, and WriteCountyConfig writes their configuration.
// Tests, the demo and the benchmarks all crawl this world.
package sim
