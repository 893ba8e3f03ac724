#!/usr/bin/env bash
# Runs the README's two set-up commands exactly as the README writes them, read out of the
# README (the first two ```sh blocks under "## Quick start"), so that the two can never drift:
#   1. the run command, on a fresh demo directory: it must exit 0 and print the whole tour;
#   2. the test command.
# Usage: scripts/readme_quickstart.sh [run|test|both]   (default both)
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-both}"

# The body of the Nth ```sh block after the "## Quick start" heading (one command a block).
block() {
    awk -v want="$1" '
        /^## / { in_section = ($0 == "## Quick start") }
        in_section && /^```sh$/ { n++; inside = 1; next }
        inside && /^```$/ { inside = 0; next }
        inside && n == want { print }
    ' README.md
}
run_cmd="$(block 1)"
test_cmd="$(block 2)"
if [[ -z "$run_cmd" || -z "$test_cmd" || "$run_cmd" == *$'\n'* || "$test_cmd" == *$'\n'* ]]; then
    echo "README.md: expected two one-line \`\`\`sh blocks under '## Quick start'" >&2
    echo "  run: [$run_cmd]  test: [$test_cmd]" >&2
    exit 1
fi

if [[ "$which" == run || "$which" == both ]]; then
    echo "== the README's run command: $run_cmd"
    demo="$(mktemp -d)/demo"
    out="$(mktemp)"
    start=$SECONDS
    status=0
    DATALITH_DEMO_DIR="$demo" bash -c "$run_cmd" >"$out" 2>&1 || status=$?
    tail -n 5 "$out"
    echo "(exit $status, $((SECONDS - start)) s)"
    if [[ $status -ne 0 ]]; then
        echo "the README's run command failed (exit $status):" >&2
        cat "$out" >&2
        exit 1
    fi
    # The tour's last step and its closing hint: the whole tour printed, not only its start.
    for expected in "7. Explain" "Try it yourself in the shell"; do
        if ! grep -qF "$expected" "$out"; then
            echo "the README's run command did not print the tour (no '$expected')" >&2
            exit 1
        fi
    done
    if [[ ! -d "$demo" ]]; then
        echo "the README's run command did not create the demo database in $demo" >&2
        exit 1
    fi
fi

if [[ "$which" == test || "$which" == both ]]; then
    echo "== the README's test command: $test_cmd"
    start=$SECONDS
    bash -c "$test_cmd"
    echo "(exit 0, $((SECONDS - start)) s)"
fi
