# Sourced before each documentation example (test/docs/examples.test.ts). The example runs as
# written; these functions stand in for what the test harness does itself or cannot do here.
#   AC_ROOT      the repository      AC_HOSTPORT  the started system (host:port)
#   AC_LOG       where each curl call leaves its status line and body
#   AC_UCP_PROFILE  a UCP platform profile served on loopback (the system runs with
#                UCP_PROFILE_ALLOW_INSECURE=true): docs/ucp.md's https://platform.example/ucp/profile.json
#   AC_SCRIPTS   package.json's scripts, one `name<TAB>command line` a line (written once by the test)
#   AC_TOKENS    where `npm run -s token` keeps what it printed, for the examples after this one
set -e

# curl: the documented URL on localhost:8080 goes to the started system, the documented UCP
# platform profile to the one served on loopback; each call's status and body are kept for the
# test to check, and the body is printed as curl would.
curl() {
  local args=() a f n profile='https://platform.example/ucp/profile.json'
  for a in "$@"; do
    a="${a//localhost:8080/$AC_HOSTPORT}"
    a="${a//127.0.0.1:8080/$AC_HOSTPORT}"
    if [ -n "${AC_UCP_PROFILE:-}" ]; then a="${a//"$profile"/$AC_UCP_PROFILE}"; fi
    args+=("$a")
  done
  n=$(($(cat "$AC_LOG/seq" 2>/dev/null || echo 0) + 1))
  echo "$n" >"$AC_LOG/seq"
  f="$AC_LOG/call.$(printf %04d "$n")"
  command curl "${args[@]}" -o "$f.body" -w '%{http_code} %{url_effective}\n' >"$f"
  cat "$f.body"
}

# npm: `npm start` is the system the harness started; scripts that start servers, install or
# write files only have to exist; `npm run token` runs for real (against the system's DATA_DIR).
# `npm run -s token -- …` runs the script's command line as npm would (sh -c in the package
# root, node_modules/.bin on PATH, the arguments after `--` appended), without npm's own start
# (~0.5 s of CPU per call): with -s npm adds nothing to the output. Without -s npm prints its
# banner on stdout, which a `$(…)` would capture, so that runs npm. The script is looked up in
# AC_SCRIPTS, not by a `node -e` per call (~0.1 s of CPU each, 51 calls).
# The same `npm run -s token -- …` with the same exported environment (but AC_LOG, each
# example's own) prints what its first run printed (AC_TOKENS): a token of the same key,
# subject, roles and an hour's life, which the next examples use within minutes. The first run
# of each runs as written (~0.5–0.8 s of CPU: the build check and the script); the examples'
# 22 calls name 9 different role sets.
npm() {
  local cmd="$1" script="" silent="" line="" found="" name value rest=() after="" kept rc
  shift || true
  case "$cmd" in
    ci | install) return 0 ;;
    start | test) script="$cmd" ;;
    run)
      for a in "$@"; do
        case "$a" in -s | --silent) silent=1 ;; -*) ;; *) script="$a"; break ;; esac
      done
      ;;
    *) echo "npm $cmd: not a command the docs may use" >&2; return 1 ;;
  esac
  while IFS=$'\t' read -r name value; do
    if [ "$name" = "$script" ]; then line="$value" found=1; break; fi
  done <"$AC_SCRIPTS"
  if [ -z "$found" ]; then echo "npm script $script does not exist" >&2; return 1; fi
  [ "$script" = token ] || return 0
  if [ -z "$silent" ]; then command npm --prefix "$AC_ROOT" "$cmd" "$@"; return; fi
  for a in "$@"; do
    if [ -n "$after" ]; then rest+=("$a"); elif [ "$a" = -- ]; then after=1; fi
  done
  kept="$AC_TOKENS/$( { printf '%q ' "${rest[@]}"; echo; env | grep -Ev '^(_|AC_LOG)=' | sort; } | md5sum | cut -c1-32)"
  if [ ! -f "$kept" ]; then
    rc=0
    (cd "$AC_ROOT" && PATH="$AC_ROOT/node_modules/.bin:$PATH" sh -c "$line \"\$@\"" npm-run "${rest[@]}") \
      >"$kept.part" || rc=$?
    if [ "$rc" -ne 0 ]; then cat "$kept.part"; rm -f "$kept.part"; return "$rc"; fi
    mv "$kept.part" "$kept"
  fi
  cat "$kept"
}

# Not run here (no daemon, no cluster): recorded only.
docker() { echo "(docker $1: not run in this test)" >&2; }
kubectl() {
  if [ "$1" = kustomize ]; then command kubectl "$@"; else echo "(kubectl $1: not run in this test)" >&2; fi
}
# Installing system packages is the reader's once-only setup (.ci/run does it in CI): recorded only.
apt-get() { echo "(apt-get $1: not run in this test)" >&2; }
