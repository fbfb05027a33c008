#!/bin/sh
# predict.sh FAULTLINE DATA_DIR OUT_DIR [PROFILES_FILE]
# Feeds the Content column of every loghub-2k data set to
# `faultline templates --messages --per-line --csv --profile <S>` and writes
# OUT_DIR/<S>.csv.
set -eu
bin=$1; data=$2; out=$3; profiles=${4:-}
mkdir -p "$out"
here=$(dirname "$0")
for dir in "$data"/*/; do
  name=$(basename "$dir")
  truth="$dir/${name}_2k.log_structured.csv"
  [ -f "$truth" ] || continue
  python3 "$here/content.py" "$truth" > "$out/$name.content"
  if [ -n "$profiles" ]; then
    "$bin" templates --messages --per-line --csv --profile "$name" --profiles "$profiles" "$out/$name.content" > "$out/$name.csv"
  else
    "$bin" templates --messages --per-line --csv --profile "$name" "$out/$name.content" > "$out/$name.csv"
  fi
done
