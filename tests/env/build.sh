#!/usr/bin/env bash
# build.sh DIR [go build flags...]: aisan's binaries into DIR, laid out as
# make install lays them out: aisan (the front, build tag aisanfront),
# aisan-full (everything; the front hands it what it does not link),
# aisan-init and aisan-guard.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$1
shift
go build "$@" -tags aisanfront -o "$out/aisan" ./cmd/aisan
go build "$@" -o "$out/aisan-full" ./cmd/aisan
go build "$@" -o "$out/" ./cmd/aisan-init ./cmd/aisan-guard
