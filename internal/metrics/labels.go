package metrics

import (
	"strconv"

	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
)

// purposeLabel keeps the purpose label to the client's own set: a caller's
// free text would be a series of its own.
func purposeLabel(p string) string {
	switch p {
	case model.PurposeRobots, model.PurposeIndex, model.PurposeList, model.PurposeDetail,
		model.PurposeAttachment, model.PurposeProbe, fetch.PurposeAsset:
		return p
	case "":
		return "unknown"
	}
	return "other"
}

// tierLabel speaks of tiers as the docs do (direct, browser), not by the
// names crawl_log stores.
func tierLabel(t string) string {
	switch t {
	case fetch.TierDirect:
		return "direct"
	case fetch.TierBrowser:
		return "browser"
	}
	return "none"
}

// exactStatus are the codes worth a series of their own; any other code is
// counted under its class (2xx … 5xx), so an odd server cannot grow the
// label without bound.
var exactStatus = map[int]bool{
	200: true, 204: true, 206: true,
	301: true, 302: true, 303: true, 304: true, 307: true, 308: true,
	400: true, 401: true, 403: true, 404: true, 410: true, 412: true, 429: true,
	500: true, 502: true, 503: true, 504: true,
}

// statusLabel is the HTTP code (or its class), or the error class of a
// request that got no answer.
func statusLabel(status int, class string) string {
	switch {
	case exactStatus[status]:
		return strconv.Itoa(status)
	case status >= 100 && status < 600:
		return strconv.Itoa(status/100) + "xx"
	case status != 0:
		return "other"
	case class != "":
		return class
	}
	return "error"
}
