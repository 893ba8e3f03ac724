#!/bin/sh
# The kill -9 torture of the commit path: N cycles (default 1000) of asynchronous Datalog and
# KV writes (full-text ones included) killed with SIGKILL at random moments, each followed by
# a reopen, a check that every acknowledged write is present and that full-text answers agree
# with the data, and `datalith check`. Prints cycles, acks, lost, check failures and wrong
# answers; exits non-zero if anything was lost, answered wrong or a check failed.
#   scripts/kill9_torture.sh [CYCLES] [more datalith-torture kill9 options, e.g. --seed 7,
#   --durability nosync: the write-ahead log without its sync, which a process crash must
#   not lose either]
set -eu
cd "$(dirname "$0")/.."
cycles="${1:-1000}"
[ $# -gt 0 ] && shift
cargo build -q -p datalith-cli --bins
exec nice -n 19 target/debug/datalith-torture kill9 --cycles "$cycles" "$@"
