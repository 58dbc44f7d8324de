#!/bin/sh
# run-all.sh [OUT] [KVBOUND] — runs every scripts/specs/*.lua with `kvbound run`, plots it with
# `kvbound plot`, and writes OUT/specs.md: per spec, its header comment, summary table, plots
# and wall time. Exits non-zero if any spec fails. OUT defaults to out/specs, KVBOUND to
# build/kvbound. A spec with the line "-- tier: full" runs only when KVB_SPECS=all (make
# run-full). Set KVB_SPEC_JOBS to limit parallel trials (default: all cores).
set -u
OUT=${1:-out/specs}
KVB=${2:-build/kvbound}
DIR=$(dirname "$0")
mkdir -p "$OUT"
MD="$OUT/specs.md"
JOBS=""
[ -n "${KVB_SPEC_JOBS:-}" ] && JOBS="--jobs $KVB_SPEC_JOBS"
fail=0
echo "# Experiment specs (scripts/specs/)" > "$MD"
for spec in "$DIR"/*.lua; do
  name=$(basename "$spec" .lua)
  t0=$(date +%s)
  # a spec marked "-- tier: full" (a costly model run beside what make run's claims report) runs
  # only under KVB_SPECS=all (make run-full); make run lists it as not run
  if grep -q '^-- tier: full$' "$spec" && [ "${KVB_SPECS:-}" != all ]; then
    echo "$name: not run (make run-full runs it)"
    { echo; echo "## $name (not run here: \`make run-full\` runs it)"; } >> "$MD"
    continue
  fi
  # real_* specs read the real model's caches, needle_* run tasks inside it (src/model/README.md, The real
  # model; *_gemma3 the second model's): without the model they are reported as not run, not as
  # failed
  case "$name" in real_*|needle_*)
    which=smollm2
    case "$name" in *_gemma3) which=gemma3 ;; esac
    if ! why=$(sh "$DIR/../fetch-model" --model $which --check 2>&1); then
      echo "$name: not run (model absent)"
      { echo; echo "## $name (not run: the real model is absent)"; echo; echo "$why"; } >> "$MD"
      continue
    fi ;;
  esac
  # shellcheck disable=SC2086
  if "$KVB" run "$spec" --out "$OUT/$name" $JOBS > "$OUT/$name.log" 2>&1 &&
     "$KVB" plot "$OUT/$name" >> "$OUT/$name.log" 2>&1; then
    status=ok
  else
    status=FAILED; fail=1
    echo "run-all: $spec failed; see $OUT/$name.log" >&2
  fi
  t1=$(date +%s)
  echo "$name: $status ($((t1 - t0)) s)"
  {
    echo; echo "## $name ($status, $((t1 - t0)) s)"; echo
    sed -n 's/^-- \{0,1\}//p' "$spec" | sed '/^name /q' | grep -v '^name ' ; echo
    [ -f "$OUT/$name/summary.md" ] && cat "$OUT/$name/summary.md"
    for png in "$OUT/$name"/*.png; do
      [ -f "$png" ] || continue
      p=$(basename "$png" .png)
      echo; echo "![$p]($name/$p.png)"
      # the figure's caption: what the reader should see ("-- caption NAME: …" lines of the spec)
      cap=$(awk -v p="$p" '$1 == "--" && $2 == "caption" && $3 == p ":" { on = 1; sub(/^-- caption [^ ]+: /, ""); printf "%s", $0; next }
                           on && /^-- / { sub(/^-- /, " "); printf "%s", $0; next } { on = 0 }' "$spec")
      [ -n "$cap" ] && { echo; echo "*$p: $cap*"; }
    done
  } >> "$MD"
done
echo "wrote $MD"
exit $fail
