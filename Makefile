# zhizhi — the two set-up commands of the README.
GO      ?= go
BIN     := bin/zhizhi
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X zhizhi/internal/cli.Version=$(VERSION)

.PHONY: demo demo-stop test build clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/zhizhi

demo: build
	bash scripts/demo.sh

demo-stop:
	bash scripts/demo-stop.sh

test:
	bash scripts/test.sh

clean: demo-stop
	rm -rf bin data
