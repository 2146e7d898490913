# 95-systemd.sh - the units of systemd/ pass `systemd-analyze verify` (with
# the built binaries in ExecStart) and carry the hardening and restart
# policy; the example settings parse; secrets in them are never printed.
. tests/cli/helpers.sh

U=$T/units
mkdir -p "$U"
cp systemd/*.service systemd/*.target "$U"/
sed -i "s|/usr/local/bin|$PWD/bin|" "$U"/*.service
for f in "$U"/accelopt-*@.service; do cp "$f" "${f%@.service}@1.service"; done # an instance each
if command -v systemd-analyze >/dev/null; then
    (cd "$U" && systemd-analyze verify --man=no ./accelopt-*@1.service ./accelopt.target) >"$T/verify.out" 2>&1
    [ $? -eq 0 ] && [ ! -s "$T/verify.out" ]; ok $? "systemd-analyze verify: every unit clean, no warning"
    sed 's/Restart=on-failure/Restart=sometimes/' "$U/accelopt-planner@1.service" >"$U/broken@1.service"
    (cd "$U" && systemd-analyze verify --man=no ./broken@1.service) 2>&1 | grep -q "restart specifier"
    ok $? "the check notices a broken unit"
else
    skip "systemd-analyze verify: every unit clean, no warning" "no systemd-analyze on this machine"
    skip "the check notices a broken unit" "no systemd-analyze on this machine"
fi

bad=0
for s in selector planner executor summarizer profiler; do
    f=systemd/accelopt-$s@.service
    for want in NoNewPrivileges=yes PrivateTmp=yes Restart=on-failure RestartPreventExitStatus=2 \
        PartOf=accelopt.target WantedBy=accelopt.target EnvironmentFile=/etc/accelopt/accelopt.env; do
        grep -qx "$want" "$f" || { echo "# $f lacks $want" >&2; bad=1; }
    done
    [ "$s" = profiler ] || grep -qx "User=accelopt" "$f" || { echo "# $f: no dedicated user" >&2; bad=1; }
done
ok $bad "every stage unit: hardening, the dedicated user, restart on failure but not after exit 2"
grep -q -- "--cpu %i" systemd/accelopt-profiler@.service; ok $? "a profiler instance is pinned to its core"

bad=0
for s in selector planner executor summarizer profiler; do
    bin/accelopt-$s --config systemd/kafka.conf.example --help >/dev/null 2>&1 || bad=1
done
ok $bad "the TLS/SASL example is a valid config of every stage"
(set -a; . systemd/accelopt.env.example; bin/accelopt-planner --help >/dev/null 2>&1)
ok $? "the environment-file example is valid for a stage"

# a SASL_SSL cluster with every librdkafka debug line on: the password never shows
cat >"$T/sasl.conf" <<'CONF'
kafka = security.protocol=SASL_SSL
kafka = sasl.mechanisms=SCRAM-SHA-512
kafka = sasl.username=accelopt
kafka = sasl.password=Sup3rS3cretPw
kafka = debug=all
CONF
ACCELOPT_REDIS=redis://:R3disS3cretPw@127.0.0.1:1 timeout 3 bin/accelopt-planner --brokers 127.0.0.1:1 \
    --config "$T/sasl.conf" --log debug </dev/null >/dev/null 2>"$T/sasl.err"
[ -s "$T/sasl.err" ] && ! grep -q "Sup3rS3cretPw\|R3disS3cretPw" "$T/sasl.err"
ok $? "neither the SASL password nor the redis password is printed, even at debug"
