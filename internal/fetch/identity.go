package fetch

import "strings"

// UserAgent is zhizhi's honest identity on every direct request
// : "zhizhi/<version> (+<contact URL>)". The browser tier
// appends the same string to Chromium's own User-Agent.
func UserAgent(version, contactURL string) string {
	version = strings.TrimSpace(version)
	if version == "" {
		version = "dev"
	}
	ua := ProductToken + "/" + version
	if c := strings.TrimSpace(contactURL); c != "" {
		ua += " (+" + c + ")"
	}
	return ua
}
