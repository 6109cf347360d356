# SPDX-License-Identifier: Apache-2.0
# The ecosystem's conventions (issue 35): NATS_URL, the nats CLI's contexts,
# NATS_NKEY and NATS_CREDS, MYSQL_PWD, ~/.my.cnf and an option file named by
# --db-option-file, each where the relay's own options leave the setting
# unset; the precedence (a flag beats the environment, which beats a file);
# --print-config naming where each value came from without the secret; and
# bad input exits before anything is done: 1 for a file that cannot be
# read (a missing context, option file or creds file), 2 for one that holds
# what the relay cannot use (not JSON, a key it cannot honour, a folder). One drain of two rows per case, against the
# fixture's servers and one nats-server of its own that wants a password or
# an NKey.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_conventions stream=IT_CONVENTIONS prefix=itconv
src=$(cd "$(dirname "$0")/../.." && pwd)
# doc_block LINE: the lines of docs/configuration.md's code block that holds LINE.
doc_block() {
  awk -v l="$1" '/^```/ { if (inb) { if (hit) { printf "%s", buf; exit }; inb = 0; buf = ""; hit = 0 }
      else inb = 1; next }
    inb { buf = buf $0 "\n"; if ($0 == l) hit = 1 }' "$src/docs/configuration.md"
}
recipe=$(doc_block "# the password in ~/.my.cnf, the servers in NATS_URL")
sample=$(doc_block "# db-password is set (not shown)")
[ -n "$recipe" ] && [ -n "$sample" ] || fail "docs/configuration.md holds the recipe and its output"
pw=$(sed -n 's/^password = "\(.*\)"$/\1/p' <<<"$recipe") # the recipe's, for the test's user
[ -n "$pw" ] || fail "the recipe's ~/.my.cnf holds a password"
wrong='Wr0ngC0nv'
natspw='N@tsC0nv,pw'
work=$(mktemp -d)
trap 'private_cleanup; rm -rf "$work"' EXIT

# Nothing of the caller's own environment: this test's home and variables.
unset XDG_CONFIG_HOME NATS_URL NATS_CONTEXT NATS_CREDS NATS_NKEY NATS_USER NATS_PASSWORD \
  NATS_CERT NATS_KEY NATS_CA MYSQL_PWD OUTBOX_DB_OPTION_FILE OUTBOX_CONFIG
export HOME=$work/home
ctxdir=$HOME/.config/nats/context
mkdir -p "$ctxdir"

"$OUTBOX_TEST_BUILD/test/nkeygen" "$work/user.nk" >"$work/user.pub"
pnats_config "$work/auth" "$(free_port)" "authorization { users: [
  {user: relay, password: \"$natspw\"}, {nkey: $(cat "$work/user.pub")} ] }"
pnats_start "$work/auth"
auth_url="nats://127.0.0.1:$(sed -n 's/^listen: 127.0.0.1:\([0-9]*\)$/\1/p' "$work/auth/nats.conf")"
main_hostport=${OUTBOX_TEST_NATS_URL#nats://}
dead_url="nats://127.0.0.1:$(free_port)"

MDB -e "DROP USER IF EXISTS 'conv'@'127.0.0.1';
  CREATE USER 'conv'@'127.0.0.1' IDENTIFIED BY '$pw'; GRANT ALL ON $db.* TO 'conv'@'127.0.0.1'"
db_fresh $db
dburl="mysql://conv@127.0.0.1:$OUTBOX_TEST_DB_PORT/$db" # no password in it
stream_delete $stream

cat >"$ctxdir/authctx.json" <<JSON
{"description": "the password server", "url": "$auth_url", "user": "relay",
 "password": "$natspw", "token": "", "creds": "", "nkey": "", "jetstream_domain": "",
 "tls_first": false}
JSON
printf '{"url": "%s"}\n' "$dead_url" >"$ctxdir/deadctx.json"
printf '{"url": "%s", "jetstream_domain": "hub"}\n' "$OUTBOX_TEST_NATS_URL" >"$ctxdir/domain.json"
printf 'url = "%s"\n' "$OUTBOX_TEST_NATS_URL" >"$ctxdir/notjson.json"
printf '[mysqld]\npassword = x\n[outbox-uvrelay]\npassword=%s\n' "$wrong" >"$work/wrong.cnf"
printf '[client-mariadb]\nhost = elsewhere\n[outbox-uvrelay]\npassword = "%s"\n' "$pw" \
  >"$work/relay.cnf"

B=("$OUTBOX_TEST_RELAY" --stream $stream --subject-prefix $prefix --no-progress)
pending() { sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0'; }
# drained WHAT command...: two rows, a drain with that command, none left.
drained() {
  local what=$1 rc=0; shift
  seed $db 2 64
  timeout -s INT 60 "$@" --drain --log-level debug >"$work/out" 2>&1 || rc=$?
  cat "$work/out" >>"$work/all.log"
  [ "$rc" = 0 ] || show_log "$work/out" 20
  assert_eq "$rc" 0 "exit status: $what"
  assert_eq "$(pending)" 0 "rows pending after: $what"
}
# refused WHAT STATUS MESSAGE command...: that exit status, a message naming
# the cause, no row touched. As for every file: 1 when it cannot be opened or
# read, 2 when it holds what the relay cannot use.
refused() {
  local what=$1 want=$2 msg=$3 rc=0 before; shift 3
  seed $db 1 64
  before=$(pending)
  timeout -s INT 60 "$@" --drain >"$work/out" 2>&1 || rc=$?
  cat "$work/out" >>"$work/all.log"
  sed 's/^/    /' "$work/out" | tail -3
  assert_eq "$rc" "$want" "exit status: $what"
  grep -qF -- "$msg" "$work/out" || fail "$what: the message does not say '$msg'"
  assert_eq "$(pending)" "$before" "rows pending after: $what (nothing done)"
}

echo "== NATS"
drained "NATS_URL only (as the nats CLI writes it: no scheme, a list)" \
  env NATS_URL=" $main_hostport , $main_hostport" "${B[@]}" --db "$OUTBOX_TEST_DB_URL$db"
drained "a nats context only (NATS_CONTEXT; user and password from it)" \
  env NATS_CONTEXT=authctx "${B[@]}" --db "$OUTBOX_TEST_DB_URL$db"
echo authctx >"$HOME/.config/nats/context.txt"
drained "the context 'nats context select' chose, nothing else naming a server" \
  "${B[@]}" --db "$OUTBOX_TEST_DB_URL$db"
echo notjson >"$HOME/.config/nats/context.txt"
drained "the chosen context is not read when --nats names a server" \
  "${B[@]}" --db "$OUTBOX_TEST_DB_URL$db" --nats "$OUTBOX_TEST_NATS_URL"
rm "$HOME/.config/nats/context.txt"
drained "NATS_NKEY with NATS_URL" env NATS_URL="$auth_url" NATS_NKEY="$work/user.nk" \
  "${B[@]}" --db "$OUTBOX_TEST_DB_URL$db"
drained "--nats beats NATS_URL" env NATS_URL="$dead_url" "${B[@]}" --db "$OUTBOX_TEST_DB_URL$db" \
  --nats "$OUTBOX_TEST_NATS_URL"
drained "NATS_URL beats the context's url" env NATS_URL="$OUTBOX_TEST_NATS_URL" \
  NATS_CONTEXT=deadctx "${B[@]}" --db "$OUTBOX_TEST_DB_URL$db"

echo "== MariaDB: docs/configuration.md's recipe, as written, then against the test servers"
sed 's/^/    /' <<<"$recipe"
(cd "$work" && PATH="$(dirname "$OUTBOX_TEST_RELAY"):$PATH" bash -e -c "$recipe") >"$work/pc0"
while IFS= read -r line; do
  grep -qxF -- "${line//\/home\/relay/$HOME}" "$work/pc0" || fail "--print-config has no line '$line'"
done <<<"$sample"
echo "ok: --print-config prints the documented lines"
seed $db 2 64
run=$(sed -e "s#nats-1.internal:4222,nats-2.internal:4222#$main_hostport,$main_hostport#" \
  -e "s#mysql://relay@db.internal/shop#$dburl#" \
  -e "s#--print-config#--drain --stream $stream --subject-prefix $prefix --no-progress#" <<<"$recipe")
rc=0
(cd "$work" && PATH="$(dirname "$OUTBOX_TEST_RELAY"):$PATH" timeout -s INT 60 bash -e -c "$run") \
  >"$work/out" 2>&1 || rc=$?
cat "$work/out" >>"$work/all.log"
[ "$rc" = 0 ] || show_log "$work/out" 20
assert_eq "$rc" 0 "exit status: the recipe, the password only in ~/.my.cnf [client]"
assert_eq "$(pending)" 0 "rows pending after the recipe"
drained "--db-option-file in place of ~/.my.cnf ([outbox-uvrelay])" "${B[@]}" --db "$dburl" \
  --nats "$OUTBOX_TEST_NATS_URL" --db-option-file "$work/relay.cnf"
drained "MYSQL_PWD beats the option file" env MYSQL_PWD="$pw" "${B[@]}" --db "$dburl" \
  --nats "$OUTBOX_TEST_NATS_URL" --db-option-file "$work/wrong.cnf"
drained "--db-password beats MYSQL_PWD" env MYSQL_PWD="$wrong" "${B[@]}" --db "$dburl" \
  --db-password "$pw" --nats "$OUTBOX_TEST_NATS_URL"

echo "== --print-config says where each value came from"
env MYSQL_PWD="$pw" NATS_CONTEXT=authctx NATS_CREDS="$work/user.creds" \
  "${B[@]}" --db "$dburl" --print-config >"$work/pc1"
env NATS_URL="$OUTBOX_TEST_NATS_URL" "${B[@]}" --db "$dburl" --print-config >"$work/pc2"
"${B[@]}" --db "$dburl" --db-option-file "$work/relay.cnf" --print-config >"$work/pc3"
grep -E 'MYSQL_PWD|nats context|NATS_|option file|^# (db-password|nats)' "$work"/pc[123] |
  sed 's/^/    /'
want() { grep -qxF -- "$2" "$1" || fail "$(basename "$1") has no line '$2'"; }
want "$work/pc1" "# environment MYSQL_PWD (read there again at start, so not set here)"
want "$work/pc1" "# db-password is set (not shown)"
want "$work/pc1" "# nats context authctx ($ctxdir/authctx.json) (read there again at start, so not set here)"
want "$work/pc1" "# nats = ${auth_url/nats:\/\//nats://relay:***@}"
want "$work/pc1" "# environment NATS_CREDS (read there again at start, so not set here)"
want "$work/pc1" "# nats-creds = $work/user.creds"
want "$work/pc2" "# option file $HOME/.my.cnf [client] (read there again at start, so not set here)"
want "$work/pc2" "# environment NATS_URL (read there again at start, so not set here)"
want "$work/pc3" "# option file $work/relay.cnf [outbox-uvrelay] (read there again at start, so not set here)"
if grep -F -e "$pw" -e "$natspw" -e 'N%40ts' "$work"/pc[123]; then
  fail "--print-config shows a secret"
fi
echo "ok: no secret in --print-config"

echo "== bad input exits 1 (a file missing) or 2 (a file wrong), before anything is done"
D=(--db "$OUTBOX_TEST_DB_URL$db")
refused "NATS_CONTEXT names no context" 1 "nats context 'nosuch': cannot read $ctxdir/nosuch.json" \
  env NATS_CONTEXT=nosuch "${B[@]}" "${D[@]}"
refused "a context that is not JSON" 2 "nats context 'notjson': $ctxdir/notjson.json is not a JSON" \
  env NATS_CONTEXT=notjson "${B[@]}" "${D[@]}"
refused "a context key the relay cannot honour" 2 "key 'jetstream_domain' is set" \
  env NATS_CONTEXT=domain "${B[@]}" "${D[@]}"
refused "NATS_CREDS names no file" 1 "environment NATS_CREDS: cannot read '$work/user.creds'" \
  env NATS_CREDS="$work/user.creds" "${B[@]}" "${D[@]}" --nats "$OUTBOX_TEST_NATS_URL"
refused "--db-option-file names no file" 1 "option file $work/absent.cnf: No such file" \
  "${B[@]}" --db "$dburl" --nats "$OUTBOX_TEST_NATS_URL" --db-option-file "$work/absent.cnf"
refused "--db-option-file names a folder" 2 "option file $work: not a regular file" \
  "${B[@]}" --db "$dburl" --nats "$OUTBOX_TEST_NATS_URL" --db-option-file "$work"
chmod 0666 "$HOME/.my.cnf"
refused "a ~/.my.cnf anyone may write" 2 "anyone may write it" \
  "${B[@]}" --db "$dburl" --nats "$OUTBOX_TEST_NATS_URL"

if grep -F -e "$pw" -e "$natspw" -e 'N%40ts' -e "$(cat "$work/user.nk")" "$work/all.log"; then
  fail "a secret appears in the relay's output"
fi
grep -q 'nats://relay:\*\*\*@' "$work/all.log" || fail "the log shows the context's user, redacted"
echo "ok: no secret in the output of $(grep -c . "$work/all.log") lines"
