#!/usr/bin/env bash
# loop.sh - the whole loop in pipe mode, joined by a FIFO: one selector runs
# throughout; a router reads what it sends, runs the stage for each message
# and writes the answers back into the selector's FIFO.  Stops when every
# task has its done message, which are printed on stdout.
#
#   pipeline/loop.sh task.jsonl [STATE.json]
#
# task.jsonl holds one task message per run (see schemas/examples/task.jsonl).
# Settings as for iterate.sh (ACCELOPT_* variables; ACCELOPT_REDIS for a
# shared memory).  Slow and serial by design: this is the debugging path;
# `accelopt run` is the fast one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${ACCELOPT_BIN:-$here/../bin}
[ $# -ge 1 ] || { echo "usage: $0 task.jsonl [STATE.json]" >&2; exit 2; }
tasks=$1
tmp=$(mktemp -d)
state=${2:-$tmp/state.json}
want=$(grep -c '"type": *"task"' "$tasks" || true)
[ "$want" -gt 0 ] || { echo "$0: no task messages in $tasks" >&2; exit 2; }
mkfifo "$tmp/back"
: > "$tmp/sent"
sel_args=(--state "$state")
[ -z "${ACCELOPT_REDIS:-}" ] || sel_args=()
"$bin/accelopt-selector" "${sel_args[@]}" < "$tmp/back" > "$tmp/sent" &
selector=$!
exec 3> "$tmp/back"      # the one writer: the selector never sees an end
cleanup() { exec 3>&-; kill "$selector" 2>/dev/null || true; wait "$selector" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
cat "$tasks" >&3
got=0
while IFS= read -r line; do
    case $line in
    '{"type":"kernel"'*)    printf '%s\n' "$line" | "$bin/accelopt-profiler" >&3 ;;
    '{"type":"candidate"'*) printf '%s\n' "$line" | "$bin/accelopt-planner" | "$bin/accelopt-executor" |
                            "$bin/accelopt-profiler" >&3 ;;
    '{"type":"pair"'*)      printf '%s\n' "$line" | "$bin/accelopt-summarizer" >&3 ;;
    '{"type":"done"'*)      printf '%s\n' "$line"; got=$((got + 1)); [ "$got" -lt "$want" ] || break ;;
    *)                      printf '%s: unexpected from the selector: %.120s\n' "$0" "$line" >&2 ;;
    esac
done < <(tail -n +1 -f --pid="$selector" "$tmp/sent")
