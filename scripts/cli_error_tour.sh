#!/usr/bin/env bash
# A tour of guirl's one error path (docs/cli.md): 10 bad inputs across verbs. Each prints its command, the
# one line guirl writes on stderr and its exit status; every one must exit 2 with one `guirl <verb>: error:`
# line and no traceback, or this script exits 1.   usage: scripts/cli_error_tour.sh   (from the checkout)
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TRANSFORMERS_VERBOSITY=error GUIRL_DEBUG=
TMP=$(mktemp -d)
HOLDER=""
trap '[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null; rm -rf "$TMP"' EXIT

# set-up: a file where a directory should be; a small verification project; a port another program holds;
# a run directory whose checkpoint was trained with optim.lr=0.5 (its trainer_state.json, as guirl writes it)
touch "$TMP/a-file"
"$PY" -c "from guirl.datagen.verify_app.sample import write_sample_project; write_sample_project('$TMP/project', steps=2)"
"$PY" -c "
import socket, sys, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
open('$TMP/port', 'w').write(str(s.getsockname()[1])); time.sleep(600)" &
HOLDER=$!
"$PY" -c "
import json, pathlib
from guirl.config import load_config
from guirl.trainers.sft import SFTConfig
config = load_config(SFTConfig, 'recipes/sft_tiny.yaml', ['output_dir=$TMP/run']).model_dump(mode='json')
config['optim']['lr'] = 0.5
step = pathlib.Path('$TMP/run/checkpoints/step_00000020'); step.mkdir(parents=True)
(step / 'trainer_state.json').write_text(json.dumps({'step': 20, 'history': [], 'config': config}))"
while [ ! -s "$TMP/port" ]; do sleep 0.1; done
PORT=$(cat "$TMP/port")

failed=0
tour() {  # tour "WHAT" [BLOCKED_MODULE] -- guirl ARGS...
    local what=$1 block=$2; shift 3
    local cmd=("$@")
    echo "# $what"
    echo "\$ guirl ${cmd[*]}${block:+    (with $block not installed)}"
    if [ -n "$block" ]; then
        "$PY" -c "import sys; sys.modules['$block'] = None; from guirl.cli import main; sys.exit(main(sys.argv[1:]))" \
            "${cmd[@]}" >/dev/null 2>"$TMP/err"
    else
        "$PY" -m guirl "${cmd[@]}" >/dev/null 2>"$TMP/err"
    fi
    local rc=$?
    cat "$TMP/err"
    echo "exit $rc"
    echo
    local lines errors
    lines=$(grep -c . "$TMP/err")
    errors=$(grep -c "^guirl .*: error: " "$TMP/err")
    if [ "$rc" != 2 ] || [ "$lines" != 1 ] || [ "$errors" != 1 ] || grep -q Traceback "$TMP/err"; then
        echo "!! expected exit 2 and one 'guirl <verb>: error:' line"; echo; failed=1
    fi
}

tour "a required option missing (argparse)" "" -- gen-data
tour "a bad value (a former raise SystemExit site)" "" -- gen-data --out "$TMP/data" --domains tv
tour "a missing input file" "" -- reasoning-data --episodes "$TMP/none.jsonl" --out "$TMP/reasoning"
tour "an unwritable --out" "" -- gen-data --out "$TMP/a-file/data"
tour "a judge argument the judge does not take" "" -- eval judge --episodes "$TMP/none.jsonl" --judge rule_outcome \
    --judge-arg nope=1 --out "$TMP/judged"
tour "an invalid config override" "" -- train sft --config recipes/sft_tiny.yaml max_steps=-1
tour "an optional extra not installed (env_backend=ray)" ray -- train computersd --config recipes/computersd_tiny.yaml \
    env_backend=ray model=checkpoints/base-agent-tiny eval_episodes=0 "output_dir=$TMP/csd"
tour "a port in use" "" -- datagen verify --data "$TMP/project" --port "$PORT"
tour "SQLite refuses WAL mode for --db" "" -- datagen verify --data "$TMP/project" --db :memory:
tour "resuming from a checkpoint of another config" "" -- train sft --config recipes/sft_tiny.yaml "output_dir=$TMP/run"

if [ "$failed" = 0 ]; then echo "all 10 bad inputs: one line, exit 2"; fi
exit "$failed"
