#!/bin/sh
# Rebuilds the fixture in this directory (fixture.db, fixture.json,
# answers/) with the row store of lancens f365447: the code of that
# revision, taken from git, runs makefixture/main.go.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$repo" archive f365447 | tar -x -C "$tmp"
mkdir -p "$tmp/cmd/makefixture"
cp "$here/makefixture/main.go" "$tmp/cmd/makefixture/main.go"
(cd "$tmp" && go run ./cmd/makefixture -out "$here")
rm -f "$here/fixture.db.lock"
