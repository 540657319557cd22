#!/usr/bin/env bash
# The whole suite on two cores: the real-browser tests (`-m e2e`, mostly waiting on Chromium and the app's
# server) in one pytest process and everything else in another, side by side; the browser tests' report is
# printed after the other one. The exit status fails if either fails. `python3 -m pytest` alone runs the same
# tests one after the other (about 15 minutes on 2 cores instead of about 10).
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
python3 -m pytest -m e2e "$@" >"$log" 2>&1 &
browser=$!
python3 -m pytest -m "not e2e" "$@"
rest=$?
wait "$browser"
browser_status=$?
echo
echo "================ the browser tests (python3 -m pytest -m e2e) ================"
cat "$log"
rm -f "$log"
exit $(( rest || browser_status ))
