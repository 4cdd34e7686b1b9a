package server

import (
	"testing"

	"zhizhi/internal/config/configtest"
)

// bundledConfig is the configuration the demo ships.
const bundledConfig = "../../demo/config"

// testConfigDir makes a configuration directory with one site, switched off
// (configtest.OneQuietSite of the bundled configuration).
func testConfigDir(t *testing.T) string {
	t.Helper()
	return configtest.OneQuietSite(t, bundledConfig)
}
