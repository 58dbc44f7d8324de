#!/bin/bash
# run.sh — kvbound's real-GPU checks in one run on a device machine (NVIDIA GPU, CUDA 13 driver),
# from the binaries pack.sh put beside this file (nothing is built there; no network needed).
# Kept in scripts/gpu-device/; pack.sh copies it and ncu-table into the repository's .devrun/
# (git-ignored) beside payload.tar.gz and MANIFEST, and it runs from there (README.md here).
# Writes $OUT/summary.md (the result), $OUT/run.log (everything), $OUT/test-cuda.log (the CUDA
# grid), $OUT/perf.log (kvb-gpucheck perf) and $OUT/ncu.csv (the perf run under Nsight Compute).
# Steps, by priority, each under `timeout`, the
# whole within KVB_DEVRUN_BUDGET seconds (default 380; a step that would not fit is SKIPPED):
#   1. the machine: nvidia-smi, nvcc --version, what the carried binaries resolve (ldd);
#   2. kvb-gpucheck-cuda devices; the full grid and every device mutant on every CUDA device
#      (scripts/check-gpu step 4: `test --full --all-devices --backend cuda`), with the fatbins
#      from KVB_CUDA_MUTANT_DIR (their SHA-256 is checked against the table compiled in);
#   3. scripts/check-gpu's two refusal checks on the real runtime: no visible device -> exit 3;
#      the correct kernels' fatbin under a mutant's name -> refused (exit 1, digest message);
#   4. kvb-gpucheck-cuda perf --backend cuda: measured kernels vs the roofline model (the table
#      scripts/gpu-report writes);
#   4b. the same perf run under Nsight Compute (device time and DRAM bytes per kernel launch);
#   5. the kvbound command end to end: scripts/gpu-spec-check's spec with backend = "cuda" against
#      backend = "cpu" (same tolerance); with no visible device it must say "no CUDA device";
#   6. compute-sanitizer racecheck on the tiny grid, memcheck on the small grid (no mutants);
#   7. the OpenCL backend on the GPU through NVIDIA's OpenCL driver (its ICD alone), when the
#      image has one.
# KVB_DEVRUN_SKIP="name ..." skips those steps (names as in the summary's table); a rehearsal on a
# machine without a GPU may set KVB_DEVRUN_GPUCHECK to build/kvb-gpucheck-cuda-standin.
# Exit status as scripts/check-gpu's: 0 when step 2 passed on a CUDA device and nothing failed,
# 3 when no CUDA device was found (nothing ran on a GPU), 1 on any failure.
set -u -o pipefail
H=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/devout}
mkdir -p "$OUT"
BUDGET=${KVB_DEVRUN_BUDGET:-380}
START=$(date +%s)
W=$(mktemp -d)
D=$(mktemp -d /tmp/kvb-devrun.XXXXXX) # the payload, unpacked (binaries, libraries, fatbins)
cp "$H/MANIFEST" "$D/" && tar -xzf "$H/payload.tar.gz" -C "$D" || { echo "run.sh: cannot unpack $H/payload.tar.gz"; exit 1; }
export LD_LIBRARY_PATH="$D/lib:$D/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64; do
  [ -d "$d" ] && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d" # after ours: libcuda.so.1 wherever the driver put it
done
export PATH="$PATH:/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer"
for d in /opt/nvidia/nsight-compute/*/; do [ -x "$d/ncu" ] && PATH="$PATH:${d%/}"; done # ncu where the image keeps it
export KVB_CUDA_MUTANT_DIR="$D/gpu/cuda-mutants" OPENBLAS_NUM_THREADS=1
G=${KVB_DEVRUN_GPUCHECK:-$D/bin/kvb-gpucheck-cuda} # (a rehearsal without a GPU may name the stand-in)
RES="$W/results" # one line per step: name|rc|seconds|verdict
# ncu's CSV -> one markdown row per kernel and launch shape (ncu-table, beside this file)
NCU_TABLE="$H/ncu-table"
: > "$RES"

left() { echo $((BUDGET - ($(date +%s) - START))); }
# step NAME CAP LOG CMD...: runs CMD under timeout min(CAP, time left - 15 s), output to LOG and
# to the main log; sets rc (125: skipped for time, 124: timed out) and secs.
step() {
  local name=$1 cap=$2 log=$3 l t s
  shift 3
  l=$(left)
  t=$((cap < l - 15 ? cap : l - 15))
  case " ${KVB_DEVRUN_SKIP:-} " in *" $name "*)
    echo "== $name: SKIPPED (KVB_DEVRUN_SKIP)"; rc=125 secs=0; return ;;
  esac
  if [ "$t" -lt 10 ]; then
    echo "== $name: SKIPPED (${l}s of the budget left)"
    rc=125 secs=0
    return
  fi
  echo "== $name (timeout ${t}s, $(($(date +%s) - START))s into the run): $*"
  s=$(date +%s)
  timeout -k 5 "$t" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  secs=$(($(date +%s) - s))
  echo "== $name: exit $rc after ${secs}s"
}
record() { # a step skipped (rc 125: budget or KVB_DEVRUN_SKIP) is SKIPPED, whatever its check says;
  # a '|' in the verdict would end its field in RES (the first H100 run lost a number so): '/'
  local v
  v=$(printf '%s' "$2" | tr '|' '/')
  [ "$rc" -eq 125 ] && case $v in SKIPPED*) ;; *) v=SKIPPED ;; esac
  echo "== verdict $1: $v"
  echo "$1|$rc|$secs|$v" >> "$RES"
}

main() {
  echo "== run.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), budget ${BUDGET}s, on $(uname -n) $(uname -m) $(uname -r), as $(id -un)"
  sed -n 1,3p "$D/MANIFEST"
  echo "== the machine"
  timeout 30 nvidia-smi 2>&1 || echo "nvidia-smi: not available or failed"
  timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.limit --format=csv 2>&1
  timeout 30 nvcc --version 2>&1 | tail -2 || echo "nvcc: not found"
  command -v compute-sanitizer || echo "compute-sanitizer: not on PATH"
  command -v ncu || echo "ncu: not on PATH"
  grep -m1 'model name' /proc/cpuinfo; nproc; grep -m1 PRETTY /etc/os-release; ldd --version | head -1
  echo "== the driver's libcuda.so.1 (the carried libcudart loads it)"
  ldconfig -p 2>/dev/null | grep 'libcuda\.so' || echo "(not in ldconfig's cache; LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
  echo "== what the carried binaries resolve (a 'not found' is a missing library)"
  for b in kvb-gpucheck-cuda kvbound kvb-gpucheck; do
    echo "$b:"; ldd "$D/bin/$b" | sed 's/ (0x[0-9a-f]*)//; s/^/  /'
  done
  rc=0 secs=0
  if ldd "$D/bin/kvb-gpucheck-cuda" "$D/bin/kvbound" | grep -q 'not found'; then rc=1; v="FAIL: kvb-gpucheck-cuda or kvbound misses a library (run.log, ldd)"
  else v="PASS: every library of the carried binaries resolves"; fi
  echo "$v"; record libraries "$v"
  echo "== sha256 of the carried files against MANIFEST"
  if (cd "$D" && sed -n '/^[0-9a-f]\{64\}  /p' MANIFEST | sha256sum --quiet -c -); then rc=0 v="PASS: every carried file is the one packed"
  else rc=1 v="FAIL: a carried file differs from MANIFEST"; fi
  echo "$v"; record manifest "$v"

  # 2. the CUDA grid and its mutants on every CUDA device
  step devices 30 "$W/devices.log" "$G" devices
  step cuda-grid 240 "$OUT/test-cuda.log" "$G" test --full --all-devices --backend cuda
  case $rc in
    0) v="PASS: the full grid and every device mutant on every CUDA device" ;;
    3) v="NO-DEVICE: no CUDA device (nothing ran on a GPU)" ;;
    124) v="FAIL: timed out" ;;
    125) v="SKIPPED" ;;
    *) v="FAIL: exit $rc" ;;
  esac
  record cuda-grid "$v"
  grid_rc=$rc

  # 3. refusals on the real runtime (scripts/check-gpu's stand-in checks, here with libcudart)
  step cuda-no-device 30 "$W/nodev.log" env CUDA_VISIBLE_DEVICES= KVB_CUDA_STANDIN_DEVICES=0 "$G" test --all-devices --backend cuda
  [ $rc -eq 3 ] && v="PASS: with no visible device kvb-gpucheck-cuda test exits 3" || v="FAIL: exit $rc, want 3"
  record cuda-no-device "$v"
  mkdir -p "$W/renamed"
  cp "$D/gpu/kvb_kernels.fatbin" "$W/renamed/KVB_MUT_NO_RESCALE.fatbin"
  step cuda-renamed-fatbin 30 "$W/renamed.log" \
    env KVB_CUDA_MUTANT_DIR="$W/renamed" "$G" test --backend cuda --grid tiny --kernel attn_decode --mutant KVB_MUT_NO_RESCALE
  if [ $rc -eq 1 ] && grep -q 'is not the build make made for' "$W/renamed.log"; then
    v="PASS: the correct fatbin named KVB_MUT_NO_RESCALE.fatbin is refused (digest differs)"
  elif [ $grid_rc -eq 3 ] && [ $rc -eq 3 ]; then v="NO-DEVICE"
  else v="FAIL: exit $rc, want 1 and the digest message"; fi
  record cuda-renamed-fatbin "$v"
  # the same mutant's own fatbin loads and is rejected by the tiny grid (the positive control)
  step cuda-mutant-control 30 "$W/mutctl.log" "$G" test --backend cuda --grid tiny --kernel attn_decode --mutant KVB_MUT_NO_RESCALE
  if [ $rc -eq 1 ] && grep -q '^FAIL' "$W/mutctl.log" && ! grep -q 'not the build\|loading' "$W/mutctl.log"; then
    v="PASS: KVB_MUT_NO_RESCALE's own fatbin loads and fails the tiny attn_decode grid"
  elif [ $rc -eq 3 ]; then v="NO-DEVICE"
  else v="FAIL: exit $rc (want 1 with a failing case, no load error)"; fi
  record cuda-mutant-control "$v"

  # 4. perf: the kernels measured against the model
  step perf 90 "$OUT/perf.log" "$G" perf --backend cuda
  case $rc in 0) v="PASS: $(grep -c '^REPORT|' "$OUT/perf.log") kernels measured" ;; 3) v="NO-DEVICE" ;; 125) v=SKIPPED ;; *) v="FAIL: exit $rc" ;; esac
  record perf "$v"

  # 4b. the same perf run under Nsight Compute: each kernel's device time and DRAM bytes, caches
  # flushed before each kernel (--cache-control all), clocks as they run (--clock-control none);
  # host timers in perf.log include the launch and the synchronisation, these do not
  if command -v ncu > /dev/null && [ $grid_rc -ne 3 ]; then
    step ncu-perf 120 "$W/ncu.log" ncu --clock-control none --cache-control all \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base --log-file "$OUT/ncu.csv" \
      "$G" perf --backend cuda
    nk=$(python3 "$NCU_TABLE" "$OUT/ncu.csv" 2> "$W/ncu-table.err" | grep -c '^| kvb_')
    if [ $rc -eq 0 ] && [ "$nk" -gt 0 ]; then v="PASS: $nk kernel shapes timed by ncu"
    elif [ $rc -eq 0 ]; then v="TOOL-ERROR: ncu ran, but ncu-table read no kernel from ncu.csv: $(head -1 "$W/ncu-table.err" | cut -c1-200)"
    elif [ $rc -eq 125 ]; then v=SKIPPED
    else v="TOOL-ERROR: ncu exit $rc: $(grep -m1 -i 'error' "$W/ncu.log" "$OUT/ncu.csv" 2>/dev/null | cut -c1-200)"; fi
  else rc=125 secs=0; v="SKIPPED (no ncu or no device)"; fi
  record ncu-perf "$v"

  # 5. the kvbound command with backend = "cuda" (scripts/gpu-spec-check's spec and tolerance)
  cat > "$W/cuda.lua" <<'SPEC'
name "gpu_backend"
stream "clusterable" { n = 200, d_key = 16, d_value = 16, m = 4, delta = 2, key_norm = 3, r = 3,
                       value_spread = 0.5, cluster_skew = 1 }
scale "inv_sqrt_d"
method "exact" { backend = "cuda" }
method "balancekv_block" { f = 8, w = 8, b = 32, T = 2, backend = "cuda", label = "bkvb" }
method "balancekv_block" { f = 8, w = 8, b = 32, T = 1, denominator = "consistent", backend = "cuda",
                           label = "bkvb_c" }
method "uniform_sample" { f = 8, w = 8, T = 2, backend = "cuda" }
trials(2)
queries { at = {50, 120, 200} }
measures { "error" }
SPEC
  sed 's/backend = "cuda"/backend = "cpu"/' "$W/cuda.lua" > "$W/cpu.lua"
  cd "$W" || return 1
  step kvbound-devices 20 "$W/kvbdev.log" "$D/bin/kvbound" devices
  step kvbound-cpu 60 "$W/kvb-cpu.log" "$D/bin/kvbound" run "$W/cpu.lua" --out "$W/out_cpu" --force
  cpu_rc=$rc
  step kvbound-cuda 60 "$W/kvb-cuda.log" "$D/bin/kvbound" run "$W/cuda.lua" --out "$W/out_cuda" --force
  cuda_rc=$rc
  if [ -f "$W/out_cpu/results.csv" ] && [ -f "$W/out_cuda/results.csv" ] && [ $cuda_rc -eq 0 ] && [ $cpu_rc -eq 0 ]; then
    v=$(paste -d, "$W/out_cpu/results.csv" "$W/out_cuda/results.csv" | awk -F, '
      NR == 1 { for (i = 1; i <= NF / 2; i++) c[$i] = i; h = NF / 2; next }
      { rows++; a = $(c["err_abs"]); b = $(c["err_abs"] + h); n = $(c["attn_norm"]); d = a - b; if (d < 0) d = -d
        r = d / (n + a); if (r > worst) { worst = r; at = $(c["method"]) " j=" $(c["j"]) }
        if ($(c["method"]) != $(c["method"] + h) || $(c["status"]) != 0 || $(c["status"] + h) != 0) bad++ }
      END { if (bad || rows != 24 || worst > 1e-3)
              printf "FAIL: backend=cuda vs cpu: %d rows, %d mismatched or failed, worst abs(d err_abs)/(attn_norm + err_abs) %.3g (%s) > 1e-3", rows, bad, worst, at
            else
              printf "PASS: backend=cuda equals backend=cpu on exact, balancekv_block (paper, consistent) and uniform_sample: %d rows, worst abs(d err_abs)/(attn_norm + err_abs) %.3g <= 1e-3 (%s)", rows, worst, at }')
  elif [ $grid_rc -eq 3 ] && grep -q 'no CUDA device' "$W/kvb-cuda.log"; then v="NO-DEVICE (kvbound says: $(grep -o 'no CUDA device[^;]*' "$W/kvb-cuda.log" | head -1))"
  else v="FAIL: kvbound run exit cpu $cpu_rc, cuda $cuda_rc: $(tail -2 "$W/kvb-cuda.log" | tr '\n' ' ')"; fi
  rc=$cuda_rc; [ $cpu_rc -eq 125 ] && rc=125; record kvbound-cuda-vs-cpu "$v"
  step kvbound-no-device 30 "$W/kvb-nodev.log" env CUDA_VISIBLE_DEVICES= "$D/bin/kvbound" run "$W/cuda.lua" --out "$W/out_nodev" --force
  cd "$D" || return 1
  if [ $rc -ne 0 ] && grep -q 'no CUDA device' "$W/kvb-nodev.log"; then v="PASS: with no visible device, exit $rc and \"$(grep -o 'no CUDA device[^;]*' "$W/kvb-nodev.log" | head -1 | cut -c1-120)\""
  else v="FAIL: exit $rc without \"no CUDA device\": $(tail -2 "$W/kvb-nodev.log" | tr '\n' ' ' | cut -c1-200)"; fi
  record kvbound-no-device "$v"

  # 6. compute-sanitizer on the real kernels (no mutants): races in shared memory, bad accesses
  if command -v compute-sanitizer > /dev/null && [ $grid_rc -ne 3 ]; then
    step racecheck-tiny 90 "$W/racecheck.log" compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 50 \
      --error-exitcode 9 "$G" test --backend cuda --grid tiny --no-mutants
    case $rc in 0) v="PASS: no hazard on the tiny grid ($(grep -c '^PASS' "$W/racecheck.log") PASS lines)" ;; 9) v="FAIL: racecheck reported: $(grep -m1 -i 'hazard\|error' "$W/racecheck.log" | cut -c1-200)" ;; 124|125) v="INCOMPLETE: exit $rc (time)" ;; 1) v="FAIL: the tiny grid failed under racecheck (exit 1)" ;; *) v="TOOL-ERROR: exit $rc: $(grep -m1 -i 'error' "$W/racecheck.log" | cut -c1-200)" ;; esac
    record racecheck-tiny "$v"
    step memcheck-small 90 "$W/memcheck.log" compute-sanitizer --tool memcheck --print-limit 50 --error-exitcode 9 \
      "$G" test --backend cuda --no-mutants
    case $rc in 0) v="PASS: no memory error on the small grid ($(grep -c '^PASS' "$W/memcheck.log") PASS lines)" ;; 9) v="FAIL: memcheck reported: $(grep -m1 -i 'invalid\|error' "$W/memcheck.log" | cut -c1-200)" ;; 125|124) v="INCOMPLETE: exit $rc (time)" ;; 1) v="FAIL: the small grid failed under memcheck (exit 1)" ;; *) v="TOOL-ERROR: exit $rc: $(grep -m1 -i 'error' "$W/memcheck.log" | cut -c1-200)" ;; esac
    record memcheck-small "$v"
  else
    rc=125 secs=0; record compute-sanitizer "SKIPPED (no compute-sanitizer or no device)"
  fi

  # 7. the OpenCL backend on the GPU, through NVIDIA's OpenCL driver only: the loader is pointed
  # (OCL_ICD_VENDORS) at a folder holding NVIDIA's ICD alone, so another ICD the image carries (a
  # CPU PoCL: the first H100 image had one, whose own assertion aborted the grid) is not run here
  lib=$( (ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/ { print $NF; exit }'
          ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 2>/dev/null) | head -1)
  others=$(ls /etc/OpenCL/vendors 2>/dev/null | grep -v -i nvidia | tr '\n' ' ' | sed 's/ $//')
  if [ -n "$lib" ]; then
    mkdir -p "$W/icd"; echo "$lib" > "$W/icd/nvidia.icd"
    echo "== OpenCL: NVIDIA's $lib alone through OCL_ICD_VENDORS (not run: ${others:-no other ICD})"
    step opencl-grid 120 "$W/opencl.log" env OCL_ICD_VENDORS="$W/icd" "$D/bin/kvb-gpucheck" test --full --all-devices
    case $rc in 0) v="PASS: the full grid and every device mutant through NVIDIA's OpenCL ($(grep '^device: ' "$W/opencl.log" | sort -u | tr '\n' ' '))" ;; 3) v="NO-DEVICE (NVIDIA's OpenCL driver found no device)" ;; 125) v=SKIPPED ;; 124) v="INCOMPLETE: timed out" ;; *) v="FAIL: exit $rc" ;; esac
  else rc=125 secs=0; v="SKIPPED: no NVIDIA OpenCL driver (no libnvidia-opencl.so.1; other ICDs, not run: ${others:-none})"; fi
  record opencl-grid "$v"
}

summary() {
  local g=$OUT/test-cuda.log p=$OUT/perf.log
  echo "# kvbound on a real GPU: run.sh summary"
  echo
  echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $(($(date +%s) - START)) s of the ${BUDGET} s budget; $(sed -n 1p "$D/MANIFEST")"
  echo "- device: $(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 || echo none); kvb-gpucheck-cuda devices: $(grep -i 'cuda\|sm_' "$W/devices.log" 2>/dev/null | head -3 | tr '\n' ';')"
  echo "- nvcc there: $(timeout 20 nvcc --version 2>/dev/null | tail -1); built with: $(sed -n 3p "$D/MANIFEST")"
  echo
  echo "| step | exit | s | verdict |"
  echo "|---|---:|---:|---|"
  awk -F'|' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$RES"
  echo
  if [ -f "$g" ]; then
    echo "## CUDA grid (test --full --all-devices --backend cuda)"
    echo
    echo "$(grep -c '^PASS' "$g") PASS lines, $(grep -c '^FAIL' "$g") FAIL lines; mutants: $(grep -c '^PASS mutant .* rejected' "$g") rejected, $(grep -c '^FAIL mutant' "$g") failed"
    echo '```'
    grep '^FAIL' "$g" | head -40
    grep '^PASS mutant' "$g" | cut -c1-160
    tail -1 "$g"
    echo '```'
  fi
  if [ -f "$p" ]; then
    echo
    echo "## Measured kernels vs the model (kvb-gpucheck perf; scripts/gpu-report's table)"
    echo
    echo "| kernel (shape) | device | measured us | roofline us | model us | in-flight us (700 / 1000 cycles) | roofline / measured |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    awk -F'|' '/^REPORT\|/ { r = ($5 != "-" && $4 > 0) ? sprintf("%.1f%%", 100 * $5 / $4) : "-";
                             printf "| %s | %s | %s | %s | %s | %s / %s | %s |\n", $2, $3, $4, $5, $6, $7, $8, r }' "$p"
    echo
    echo '```'
    grep -E '^streaming copy|^[a-z_]* reshaped|model, this|not in the model|^FAIL' "$p" | cut -c1-400
    echo '```'
  fi
  if [ -s "$OUT/ncu.csv" ]; then
    echo
    echo "## Nsight Compute: device time and DRAM traffic per kernel shape (perf's launches; caches flushed)"
    echo
    python3 "$NCU_TABLE" "$OUT/ncu.csv" 2>&1
  fi
  echo
  echo "## scripts/cuda-compile-check of the build that packed this (run where it was packed; no GPU needed)"
  echo '```'
  grep -v '^  sm_80' "$D/gpu/cuda-compile-check.out" 2>/dev/null || echo "(not recorded)"
  echo '```'
  echo
  echo "## flagged lines per log (first 6 each; in renamed.log and mutctl.log they are the expected refusal and the mutant's failing cases)"
  echo '```'
  for f in "$W"/renamed.log "$W"/mutctl.log "$W"/nodev.log "$W"/kvb-cuda.log "$W"/kvb-nodev.log "$W"/racecheck.log "$W"/memcheck.log "$W"/opencl.log; do
    [ -f "$f" ] || continue
    n=$(grep -c -i '^FAIL\|hazard\|invalid .* of size\|ERROR SUMMARY: [1-9]' "$f")
    echo "$(basename "$f"): $n flagged lines"
    grep -i '^FAIL\|hazard\|invalid .* of size\|ERROR SUMMARY' "$f" | head -6 | cut -c1-240
  done
  echo '```'
}

main 2>&1 | tee "$OUT/run.log"
summary > "$OUT/summary.md" 2>&1
cat "$OUT/summary.md"
if awk -F'|' '$4 ~ /^FAIL/ { bad = 1 } END { exit !bad }' "$W/results"; then final=1
elif grep -q '^cuda-grid|0|' "$W/results"; then final=0
else final=3; fi
echo "run.sh: exit $final (0 pass on a CUDA device, 3 no CUDA device, 1 failure); files in $OUT: $(ls "$OUT" | tr '\n' ' ')"
rm -rf "$W" "$D"
exit $final
