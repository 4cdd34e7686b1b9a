package fetch

import (
	"errors"
	"testing"
	"time"
)

func TestRobotsForStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /x/\n")
	tests := []struct {
		name    string
		status  int
		err     error
		path    string
		allowed bool
	}{
		{"200 parses the body", 200, nil, "/x/1", false},
		{"200 body allows the rest", 200, nil, "/y", true},
		{"404 allows all", 404, nil, "/x/1", true},
		{"403 allows all", 403, nil, "/x/1", true},
		{"429 is fail-closed", 429, nil, "/y", false},
		{"500 disallows all", 500, nil, "/y", false},
		{"503 disallows all", 503, nil, "/y", false},
		{"unfollowed redirect disallows all", 301, nil, "/y", false},
		{"network error disallows all", 0, errors.New("connection refused"), "/y", false},
		{"fail-closed still lets robots.txt through", 503, nil, "/robots.txt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := RobotsForStatus(tt.status, body, tt.err, ProductToken).Decide(tt.path)
			if d.Allowed != tt.allowed {
				t.Errorf("Decide(%q) = %+v, want allowed %v", tt.path, d, tt.allowed)
			}
			if d.Line == 0 && d.Reason == "" {
				t.Errorf("decision without a rule has no reason: %+v", d)
			}
		})
	}
}

// TestRobotsExpired: a robots.txt that was read is kept 24 h, no longer.
func TestRobotsExpired(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if RobotsExpired(at, at.Add(24*time.Hour-time.Second)) {
		t.Error("expired a second before 24 h")
	}
	if !RobotsExpired(at, at.Add(24*time.Hour)) {
		t.Error("still fresh after 24 h")
	}
}
