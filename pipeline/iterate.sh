#!/usr/bin/env bash
# iterate.sh - one pass of the loop in pipe mode, for debugging:
#   the selector takes what came back (a task, results, experiences), and
#   what it sends goes through the stages by type:
#     kernel    -> accelopt-profiler
#     candidate -> accelopt-planner | accelopt-executor | accelopt-profiler
#     pair      -> accelopt-summarizer
#     done      -> appended to the done file
#   What the stages answer is printed: feed it to the next pass.
#
#   pipeline/iterate.sh STATE.json < task.jsonl > pass1.jsonl
#   pipeline/iterate.sh STATE.json < pass1.jsonl > pass2.jsonl   # ...until empty
#
# Run state is kept in STATE.json (or in redis when ACCELOPT_REDIS is set,
# which also gives the summarizer a memory to write and the planner one to
# read).  Stage settings come from ACCELOPT_* variables; every stage's
# stderr goes to ours.  Done messages go to $ACCELOPT_DONE (default: the
# state file's name with .done.jsonl).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${ACCELOPT_BIN:-$here/../bin}
[ $# -eq 1 ] || { echo "usage: $0 STATE.json < in.jsonl > out.jsonl" >&2; exit 2; }
state=$1
done_file=${ACCELOPT_DONE:-${state%.json}.done.jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${ACCELOPT_REDIS:-}" ]; then
    "$bin/accelopt-selector" > "$tmp/sent"
else
    "$bin/accelopt-selector" --state "$state" > "$tmp/sent"
fi
# our encoder writes "type" first, so a line's type is its prefix
pick() { grep "^{\"type\":\"$1\"" "$tmp/sent" || true; }
pick kernel | "$bin/accelopt-profiler"
pick candidate | "$bin/accelopt-planner" | "$bin/accelopt-executor" | "$bin/accelopt-profiler"
pick pair | "$bin/accelopt-summarizer"
pick done >> "$done_file"
