#!/bin/bash
# One start of the compiled embedded system as `npm start` runs it, on a new DATA_DIR: the time
# from spawn to the first 200 of /readyz (polled every 50 ms), printed with the label given and
# the load average (docs/performance.md, "A new store from the build's template").
#   npm run build && bench/tools/start-to-ready.sh <label>
set -u
d=$(mktemp -d)
port=$((4200 + RANDOM % 500))
s=$(date +%s%N)
PORT=$port DATA_DIR=$d LOG_LEVEL=silent MALLOC_ARENA_MAX=2 node --max-semi-space-size=16 \
  --max-old-space-size=256 --no-allocation-site-pretenuring --heap-growing-percent=200 \
  --liftoff-only dist/gateway/main.js >/dev/null 2>&1 &
pid=$!
until curl -s -o /dev/null -w '%{http_code}' "localhost:$port/readyz" 2>/dev/null | grep -q 200; do
  kill -0 $pid 2>/dev/null || { echo "the process exited before it was ready"; exit 1; }
  sleep 0.05
done
e=$(date +%s%N)
kill $pid
wait $pid 2>/dev/null
echo "${1:-start} $(((e - s) / 1000000)) ms (load $(cut -d' ' -f1 /proc/loadavg))"
rm -rf "$d"
