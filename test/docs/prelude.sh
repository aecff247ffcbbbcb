# Sourced before each documentation example (test/docs/examples.test.ts). The example runs as
# written; these functions stand in for what the test harness does itself or cannot do here.
#   AC_ROOT      the repository      AC_HOSTPORT  the started system (host:port)
#   AC_LOG       where each curl call leaves its status line and body
#   AC_UCP_PROFILE  a UCP platform profile served on loopback (the system runs with
#                UCP_PROFILE_ALLOW_INSECURE=true): docs/ucp.md's https://platform.example/ucp/profile.json
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
# (~0.5 s of CPU per call, and the examples make 26): with -s npm adds nothing to the output.
# Without -s npm prints its banner on stdout, which a `$(…)` would capture, so that runs npm.
npm() {
  local cmd="$1" script="" silent="" line rest=() after=""
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
  line=$(node -e "const s=require(process.argv[1]).scripts; if(!s[process.argv[2]]){console.error('npm script '+process.argv[2]+' does not exist');process.exit(1)} console.log(s[process.argv[2]])" \
    "$AC_ROOT/package.json" "$script")
  [ "$script" = token ] || return 0
  if [ -z "$silent" ]; then command npm --prefix "$AC_ROOT" "$cmd" "$@"; return; fi
  for a in "$@"; do
    if [ -n "$after" ]; then rest+=("$a"); elif [ "$a" = -- ]; then after=1; fi
  done
  (cd "$AC_ROOT" && PATH="$AC_ROOT/node_modules/.bin:$PATH" sh -c "$line \"\$@\"" npm-run "${rest[@]}")
}

# Not run here (no daemon, no cluster): recorded only.
docker() { echo "(docker $1: not run in this test)" >&2; }
kubectl() {
  if [ "$1" = kustomize ]; then command kubectl "$@"; else echo "(kubectl $1: not run in this test)" >&2; fi
}
# Installing system packages is the reader's once-only setup (.ci/run does it in CI): recorded only.
apt-get() { echo "(apt-get $1: not run in this test)" >&2; }
