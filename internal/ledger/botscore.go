package ledger

import (
	"math"
	"regexp"

	"zhizhi/internal/store"
)

// BotScore weighs five signs of a machine, each 0 or 1, in hundredths: the
// score runs from 0 (surely a person) to 100 (surely a machine). Hundredths
// keep the band edges exact — 20+15+15+10 is 60, where 0.2+0.15+0.15+0.1
// in floating point may not be.
const (
	WeightBotUA        = 40 // the user agent names a bot, a tool or a headless browser
	WeightFlatInterval = 20 // gaps between pages vary by less than 0.1 s²
	WeightNoSleep      = 15 // never a pause of 30 s or more between pages
	WeightNoAssets     = 15 // never a style sheet, script or image
	WeightFlatEvents   = 10 // interaction entropy below 0.5 bits (no events: 0 bits)
)

// Band edges in hundredths: below HumanBelow a visitor is human, from
// BotFrom on a bot, in between for review.
const (
	HumanBelow = 30
	BotFrom    = 60
)

// Feature thresholds.
const (
	// FlatVariance is the gap variance, in s², below which page requests
	// come as if from a timer.
	FlatVariance = 0.1
	// MinNavigations is how many navigations it takes before the gap
	// variance says anything (two gaps); fewer: the sign is not counted.
	MinNavigations = 3
	// SleepWindowSeconds is the shortest pause between pages that counts as a
	// person reading.
	SleepWindowSeconds = 30
	// FlatEntropy is the interaction entropy, in bits, below which the
	// events look scripted or absent.
	FlatEntropy = 0.5
)

// UA classes.
const (
	UABrowser = "browser"
	UABot     = "bot"
)

// botUA matches bots, crawlers, command-line tools and HTTP libraries, API
// clients, link-preview fetchers (chat apps and social sites fetch a page
// to draw its preview), archivers, page auditors and headless browsers.
var botUA = regexp.MustCompile(`(?i)bot|spider|crawl|slurp|curl|wget|python|go-http-client|java/|okhttp|` +
	`libwww|httpclient|scrapy|headless|phantomjs|puppeteer|playwright|selenium|node-fetch|axios|` +
	`httpie|postman|insomnia|aiohttp|httpx|urllib|guzzle|powershell|` +
	`facebookexternalhit|facebookcatalog|ia_archiver|archive\.org|lighthouse|pagespeed|gtmetrix|` +
	`slack|whatsapp|telegram|discord|skype|viber|line/|embedly|vkshare|pinterest|preview|` +
	`applebot|bingpreview|google-inspectiontool|googleother|feedfetcher|mediapartners`)

// ClassifyUA says whether a user agent is a browser's or names a bot, a
// tool or a headless browser. An empty user agent is a tool's: every
// browser sends one.
func ClassifyUA(ua string) string {
	if ua == "" || botUA.MatchString(ua) {
		return UABot
	}
	return UABrowser
}

// Features are BotScore's five signs of one visitor.
type Features struct {
	BotUA        bool
	FlatInterval bool // false also when there are too few pages to tell
	NoSleep      bool
	NoAssets     bool
	FlatEvents   bool

	// What the signs were read from, for a person reviewing them.
	IntervalVariance float64 // s², NaN with fewer than MinNavigations
	Entropy          float64 // bits
}

// FeaturesOf reads the signs from a visitor's day.
func FeaturesOf(v *store.VisitorDay) Features {
	f := Features{
		BotUA:            v.UAClass != UABrowser,
		NoSleep:          v.SleepWindows == 0,
		NoAssets:         v.Assets == 0,
		IntervalVariance: math.NaN(),
	}
	// Population variance of the gaps; fewer than MinNavigations pages
	// leave too few gaps to call them regular.
	if v.Navigations >= MinNavigations && v.GapCount > 0 {
		f.IntervalVariance = v.GapM2 / float64(v.GapCount)
		f.FlatInterval = f.IntervalVariance < FlatVariance
	}
	e := v.Events
	f.Entropy = Entropy(e.Scroll, e.Pointer, e.Key, e.Click, e.Visibility)
	f.FlatEvents = f.Entropy < FlatEntropy
	return f
}

// Entropy is the Shannon entropy, in bits, of a distribution given by
// counts; no counts at all is 0 bits.
func Entropy(counts ...int64) float64 {
	var total int64
	for _, c := range counts {
		total += max(c, 0)
	}
	if total == 0 {
		return 0
	}
	h := 0.0
	for _, c := range counts {
		if c <= 0 {
			continue
		}
		p := float64(c) / float64(total)
		h -= p * math.Log2(p)
	}
	return h
}

// Score is BotScore in hundredths: the sum of the weights of the signs
// present.
func Score(f Features) int {
	s := 0
	for _, w := range []struct {
		on     bool
		weight int
	}{
		{f.BotUA, WeightBotUA},
		{f.FlatInterval, WeightFlatInterval},
		{f.NoSleep, WeightNoSleep},
		{f.NoAssets, WeightNoAssets},
		{f.FlatEvents, WeightFlatEvents},
	} {
		if w.on {
			s += w.weight
		}
	}
	return s
}

// Proven says a browser ran the page: the page script's beacon came back
// with the page's token and reported interaction events. Events are only
// counted from such beacons, so any event is that proof.
func Proven(v *store.VisitorDay) bool {
	e := v.Events
	return e.Scroll+e.Pointer+e.Key+e.Click+e.Visibility > 0
}

// BandOf is a visitor's band: the band of its score, except that without
// proof that a browser ran the page the best band is review — a script
// with a browser's user agent that waits between pages scores low on the
// other signs, and it must not be counted as a person.
func BandOf(v *store.VisitorDay) string {
	b := Band(v.Score)
	if b == store.BandHuman && !Proven(v) {
		return store.BandReview
	}
	return b
}

// Band names the band of a score in hundredths.
func Band(score int) string {
	switch {
	case score < HumanBelow:
		return store.BandHuman
	case score < BotFrom:
		return store.BandReview
	default:
		return store.BandBot
	}
}
