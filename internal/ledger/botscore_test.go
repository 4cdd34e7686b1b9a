package ledger

import (
	"math"
	"testing"
	"time"

	"zhizhi/internal/store"
)

// TestScore: BotScore = Σ wᵢ·fᵢ with the weights 0.40 (bot user agent),
// 0.20 (interval variance < 0.1 s²), 0.15 (no sleep window), 0.15 (no
// static resource), 0.10 (interaction entropy < 0.5 bits); bands < 0.3
// human, 0.3–0.6 review, ≥ 0.6 bot. Expected values are written in
// hundredths from those numbers.
func TestScore(t *testing.T) {
	tests := []struct {
		name string
		f    Features
		want int
		band string
	}{
		{"nothing machine-like", Features{}, 0, "human"},
		{"bot user agent only", Features{BotUA: true}, 40, "review"},
		{"flat intervals only", Features{FlatInterval: true}, 20, "human"},
		{"no sleep window only", Features{NoSleep: true}, 15, "human"},
		{"no assets only", Features{NoAssets: true}, 15, "human"},
		{"flat events only", Features{FlatEvents: true}, 10, "human"},
		{"one page read by a person: no sleep, no events", Features{NoSleep: true, FlatEvents: true}, 25, "human"},
		{"no sleep and no assets: exactly 0.30 is review", Features{NoSleep: true, NoAssets: true}, 30, "review"},
		{"browser UA, fast, no assets, no events: exactly 0.60 is bot",
			Features{FlatInterval: true, NoSleep: true, NoAssets: true, FlatEvents: true}, 60, "bot"},
		{"browser UA, slow but jittery scraper", Features{NoSleep: true, NoAssets: true, FlatEvents: true}, 40, "review"},
		{"declared bot that pauses", Features{BotUA: true, NoAssets: true}, 55, "review"},
		{"everything", Features{BotUA: true, FlatInterval: true, NoSleep: true, NoAssets: true, FlatEvents: true}, 100, "bot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Score(tt.f)
			if got != tt.want {
				t.Errorf("Score = %d hundredths, want %d", got, tt.want)
			}
			if b := Band(got); b != tt.band {
				t.Errorf("Band(%d) = %q, want %q", got, b, tt.band)
			}
		})
	}
}

func TestBandEdges(t *testing.T) {
	for score, want := range map[int]string{0: "human", 29: "human", 30: "review", 59: "review", 60: "bot", 100: "bot"} {
		if got := Band(score); got != want {
			t.Errorf("Band(%d) = %q, want %q", score, got, want)
		}
	}
}

func TestClassifyUA(t *testing.T) {
	tests := []struct {
		ua   string
		want string
	}{
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "browser"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 MicroMessenger/8.0", "browser"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "bot"},
		{"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "bot"},
		{"Sogou web spider/4.0", "bot"},
		{"ZhizhiCrawler/1.0", "bot"},
		{"curl/8.5.0", "bot"},
		{"Wget/1.21.4", "bot"},
		{"python-requests/2.31.0", "bot"},
		{"Go-http-client/1.1", "bot"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "bot"},
		{"", "bot"},
		// Tools, API clients, link previews, archivers and page auditors.
		{"HTTPie/3.2.2", "bot"},
		{"PostmanRuntime/7.36.0", "bot"},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "bot"},
		{"ia_archiver (+http://www.alexa.com/site/help/webmasters; crawler@alexa.com)", "bot"},
		{"Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse", "bot"},
		{"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "bot"},
		{"Twitterbot/1.0", "bot"},
		{"WhatsApp/2.23.20.0 A", "bot"},
		{"TelegramBot (like TwitterBot)", "bot"},
		{"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "bot"},
		{"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", "bot"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "bot"},
		{"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/534+ (KHTML, like Gecko) BingPreview/1.0b", "bot"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15", "browser"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", "browser"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "browser"},
	}
	for _, tt := range tests {
		if got := ClassifyUA(tt.ua); got != tt.want {
			t.Errorf("ClassifyUA(%q) = %q, want %q", tt.ua, got, tt.want)
		}
	}
}

func TestEntropy(t *testing.T) {
	tests := []struct {
		name   string
		counts []int64
		want   float64
	}{
		{"no events", []int64{0, 0, 0, 0, 0}, 0},
		{"one type only", []int64{50, 0, 0, 0, 0}, 0},
		{"two types, even", []int64{10, 10, 0, 0, 0}, 1},
		{"four types, even", []int64{5, 5, 5, 5, 0}, 2},
		{"3:1", []int64{3, 1, 0, 0, 0}, 0.8112781244591328},
	}
	for _, tt := range tests {
		if got := Entropy(tt.counts...); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Entropy = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// visit plays page navigations at the given offsets (seconds) plus assets
// and events through the recorder's own arithmetic, and reads the signs.
func visit(ua string, navAt []float64, assets int, ev store.VisitorEvents) (*store.VisitorDay, Features) {
	v := &store.VisitorDay{UAClass: ClassifyUA(ua)}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var hits []pendingHit
	for _, s := range navAt {
		hits = append(hits, pendingHit{at: t0.Add(time.Duration(s * float64(time.Second))), hit: Hit{Kind: KindPage, CardID: 1}})
	}
	for range assets {
		hits = append(hits, pendingHit{at: t0, hit: Hit{Kind: KindAsset}})
	}
	hits = append(hits, pendingHit{at: t0, hit: Hit{Kind: KindBeacon, Events: ev}})
	applyHits(v, hits)
	return v, FeaturesOf(v)
}

// TestFeaturesOf: the signs as read from what a visitor did.
func TestFeaturesOf(t *testing.T) {
	browser := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	tests := []struct {
		name   string
		ua     string
		navAt  []float64
		assets int
		ev     store.VisitorEvents
		want   Features
		score  int
	}{
		{name: "reader: pauses, assets, scrolls and moves", ua: browser, navAt: []float64{0, 45, 125, 163}, assets: 3,
			ev: store.VisitorEvents{Scroll: 12, Pointer: 30, Key: 2}, want: Features{}, score: 0},
		{name: "timer-driven fetcher with a browser UA", ua: browser, navAt: []float64{0, 0.5, 1.0, 1.5, 2.0},
			want: Features{FlatInterval: true, NoSleep: true, NoAssets: true, FlatEvents: true}, score: 60},
		{name: "two pages only: the variance is not counted", ua: browser, navAt: []float64{0, 0.5},
			want: Features{NoSleep: true, NoAssets: true, FlatEvents: true}, score: 40},
		{name: "three pages: the variance counts", ua: browser, navAt: []float64{0, 0.5, 1.0},
			want: Features{FlatInterval: true, NoSleep: true, NoAssets: true, FlatEvents: true}, score: 60},
		{name: "gaps varying by more than 0.1 s² are not flat", ua: browser, navAt: []float64{0, 1, 3, 4},
			want: Features{NoSleep: true, NoAssets: true, FlatEvents: true}, score: 40},
		{name: "a pause of exactly 30 s is a sleep window", ua: browser, navAt: []float64{0, 30}, assets: 1,
			want: Features{FlatEvents: true}, score: 10},
		{name: "a pause of 29 s is not", ua: browser, navAt: []float64{0, 29}, assets: 1,
			want: Features{NoSleep: true, FlatEvents: true}, score: 25},
		{name: "one event type only is 0 bits", ua: browser, navAt: []float64{0, 40}, assets: 1,
			ev: store.VisitorEvents{Pointer: 200}, want: Features{FlatEvents: true}, score: 10},
		{name: "scroll 1 : pointer 9 is 0.47 bits, below 0.5", ua: browser, navAt: []float64{0, 40}, assets: 1,
			ev: store.VisitorEvents{Scroll: 1, Pointer: 9}, want: Features{FlatEvents: true}, score: 10},
		{name: "scroll 1 : pointer 3 is 0.81 bits", ua: browser, navAt: []float64{0, 40}, assets: 1,
			ev: store.VisitorEvents{Scroll: 1, Pointer: 3}, want: Features{}, score: 0},
		{name: "declared crawler, fast, nothing else", ua: "ExampleBot/2.0 (+https://bot.example)", navAt: []float64{0, 0.2, 0.4, 0.6},
			want: Features{BotUA: true, FlatInterval: true, NoSleep: true, NoAssets: true, FlatEvents: true}, score: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, f := visit(tt.ua, tt.navAt, tt.assets, tt.ev)
			got := f
			got.IntervalVariance, got.Entropy = 0, 0
			if got != tt.want {
				t.Errorf("features = %+v, want %+v (variance %v s², entropy %v bits)", got, tt.want, f.IntervalVariance, f.Entropy)
			}
			// Without events (no proof a browser ran the page) the best
			// band is review.
			band := Band(tt.score)
			if tt.ev == (store.VisitorEvents{}) && band == "human" {
				band = "review"
			}
			if v.Score != tt.score || v.Band != band {
				t.Errorf("stored score %d %q, want %d %q", v.Score, v.Band, tt.score, band)
			}
		})
	}
}

// TestWelford: the running gap statistics equal the two-pass ones.
func TestWelford(t *testing.T) {
	v, f := visit("Mozilla/5.0", []float64{0, 2, 6, 7, 17}, 0, store.VisitorEvents{})
	// gaps 2, 4, 1, 10: mean 4.25, variance (2.25²+0.25²+3.25²+5.75²)/4 = 12.1875
	if v.GapCount != 4 || math.Abs(v.GapMean-4.25) > 1e-9 || math.Abs(f.IntervalVariance-12.1875) > 1e-9 {
		t.Errorf("gaps: count %d mean %v variance %v, want 4, 4.25, 12.1875", v.GapCount, v.GapMean, f.IntervalVariance)
	}
}
