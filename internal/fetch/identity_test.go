package fetch

import (
	"testing"

	"zhizhi/internal/robotstxt"
)

func TestUserAgent(t *testing.T) {
	ua := UserAgent("0.1.0", "https://zhizhi.example/contact")
	if ua != "zhizhi/0.1.0 (+https://zhizhi.example/contact)" {
		t.Errorf("UserAgent = %q", ua)
	}
	// Our own robots.txt matching must recognise the identity we send.
	if robotstxt.AgentToken(ua) != ProductToken {
		t.Errorf("AgentToken(%q) = %q", ua, robotstxt.AgentToken(ua))
	}
}
