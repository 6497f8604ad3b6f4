#!/usr/bin/env bash
# One secured Apache Kafka KRaft node on 127.0.0.1 for kdp's TLS/SASL/ACL tests.
#
#   scripts/kafka-secure.sh start   certificates, users, IdP, node, topics, ACLs; wait until ready
#   scripts/kafka-secure.sh stop    stop the node and the IdP; idempotent
#   scripts/kafka-secure.sh env     print target/kafka-secure/secure.env
#
# Listeners: PLAINTEXT (setup; ANONYMOUS is a super user), SASL_SSL (SCRAM-SHA-512,
# SCRAM-SHA-256, PLAIN, OAUTHBEARER checked against the local IdP's JWKS), SASL_PLAINTEXT
# (SCRAM-SHA-512 only),
# SSL (client certificate required; CN=admin maps to User:admin), WRONGHOST (SSL, a certificate
# for another host name) and EXPIRED (SSL, an expired certificate). StandardAuthorizer:
# admin is a super user, reader may READ topic secure-read only.
#
# Everything secret (keys, passwords, tokens) is made here at start, under target/, and
# the script writes ready client properties files there (see secure.env). Uses the jars of
# it/ (built with maven if missing), like scripts/kafka-cluster.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IT="$ROOT/it"
STATE="$ROOT/target/kafka-secure"
# the same per-version build as scripts/kafka-cluster.sh (it/pom.xml)
VERSION="${KDP_KAFKA_VERSION:-4.4.0}"
LIB="$IT/target/kafka-$VERSION/lib"
CLASSES="$IT/target/kafka-$VERSION/classes"
# Kafka 3.x logs with log4j 1.x (reload4j) and has AclCommand in the core jar; 4.x uses log4j2
# and kafka-tools
if [[ "$VERSION" == 3.* ]]; then
    LOG_OPT="-Dlog4j.configuration=file:$IT/config/broker-log4j.properties"
    ACL_COMMAND=kafka.admin.AclCommand
else
    LOG_OPT="-Dlog4j2.configurationFile=$IT/config/broker-log4j2.properties"
    ACL_COMMAND=org.apache.kafka.tools.AclCommand
fi
JAVA="${KDP_IT_JAVA:-java}"
READY_TIMEOUT="${KDP_IT_READY_TIMEOUT:-90}"
CLUSTER_ID="a2RwLXNlY3VyZS1ub2RlMQ" # base64url of "kdp-secure-node1"

log() { echo "kafka-secure: $*" >&2; }
trap 'log "FAILED at line $LINENO (logs: ${STATE#"$ROOT/"})"' ERR

is_ours() {
    local pid="$1" cmd
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    cmd=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || return 1
    [[ "$cmd" == *"$STATE"* ]]
}

stop_pid() {
    local f="$1" pid i
    [[ -f "$f" ]] || return 0
    pid=$(cat "$f" 2>/dev/null || true)
    if is_ours "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 150; i++)); do is_ours "$pid" || break; sleep 0.1; done
        if is_ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -f "$f"
}

cmd_stop() {
    stop_pid "$STATE/node.pid"
    stop_pid "$STATE/idp.pid"
    rm -f "$STATE/secure.env"
    log "stopped"
}

build() {
    if [[ -f "$CLASSES/dev/kdp/it/Scenario.class" ]] && ls "$LIB"/kafka_2.13-*.jar >/dev/null 2>&1; then
        return 0
    fi
    log "building it/ with maven"
    mvn -B -q -f "$IT/pom.xml" -Dkafka.version="$VERSION" -Dkafka.generation="${VERSION%%.*}" \
        package >"$ROOT/target/kdp-secure-maven.log" 2>&1 ||
        { tail -n 40 "$ROOT/target/kdp-secure-maven.log" >&2; exit 1; }
}

free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# A random password: letters and digits only, so that it needs no quoting anywhere.
secret() { openssl rand -hex 12; }

# ---------------------------------------------------------------- certificates

certs() {
    local d="$STATE/certs"
    mkdir -p "$d/db"
    cd "$d"
    local key="openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256"
    for ca in ca other-ca; do
        $key -out "$ca.key" 2>/dev/null
        openssl req -x509 -new -key "$ca.key" -subj "/CN=kdp test $ca" -days 2 -out "$ca.pem" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    done
    leaf() { # name, subject CN, subjectAltName
        $key -out "$1.key" 2>/dev/null
        openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
        printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\n' "$3" >"$1.ext"
        openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile "$1.ext" -out "$1.crt" 2>/dev/null
        cat "$1.key" "$1.crt" >"$1.pem" # a PEM keystore: key, then the chain
    }
    leaf broker localhost "DNS:localhost,IP:127.0.0.1"
    leaf wronghost wrong.example.invalid "DNS:wrong.example.invalid"
    leaf client admin "DNS:client"
    # the same client identity with its key encrypted (ssl.key.password)
    openssl pkcs8 -topk8 -v2 aes-256-cbc -in client.key -passout "pass:$KEY_PW" -out client-enc.key
    cat client-enc.key client.crt >client-enc.pem
    # and with PBES1 (pbeWithSHA1And3-KeyTripleDES-CBC), the one encrypted key Java 17 reads too
    openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in client.key -passout "pass:$KEY_PW" -out client-pbes1.key
    cat client-pbes1.key client.crt >client-pbes1.pem
    # expired: `openssl ca` takes explicit start and end dates
    $key -out expired.key 2>/dev/null
    openssl req -new -key expired.key -subj "/CN=localhost" -out expired.csr \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
    : >db/index.txt
    echo 01 >db/serial
    cat >ca.cnf <<EOF
[ ca ]
default_ca = dflt
[ dflt ]
database = $d/db/index.txt
new_certs_dir = $d/db
serial = $d/db/serial
default_md = sha256
policy = any
copy_extensions = copy
[ any ]
commonName = supplied
EOF
    openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.crt \
        -startdate 20200101000000Z -enddate 20200102000000Z -notext 2>/dev/null
    cat expired.key expired.crt >expired.pem
    chmod 600 ./*.key ./*.pem
    cd "$ROOT"
}

# ---------------------------------------------------------------- start

cmd_start() {
    command -v "$JAVA" >/dev/null || { log "java not found ($JAVA)"; exit 1; }
    cmd_stop 2>/dev/null
    build
    rm -rf "$STATE"
    mkdir -p "$STATE/data"
    chmod 700 "$STATE"
    KEY_PW=$(secret)
    certs
    local c="$STATE/certs"

    local admin_pw reader_pw client_secret
    admin_pw=$(secret); reader_pw=$(secret); client_secret=$(secret)

    # the IdP (JWKS for the broker, tokens for kdp)
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$STATE/idp-key.pem" 2>/dev/null
    setsid bash -c 'echo $$ >"$1/idp.pid"; shift; exec "$@"' _ "$STATE" \
        python3 "$ROOT/scripts/oauth-idp.py" "$STATE" kdp-client "$client_secret" \
        </dev/null >"$STATE/idp.port" 2>"$STATE/idp.log" &
    local i idp_port=""
    for ((i = 0; i < 100; i++)); do
        idp_port=$(head -n1 "$STATE/idp.port" 2>/dev/null || true)
        [[ -n "$idp_port" ]] && break
        sleep 0.1
    done
    [[ -n "$idp_port" ]] || { log "the IdP did not start"; cat "$STATE/idp.log" >&2; exit 1; }
    local jwks="http://127.0.0.1:$idp_port/jwks.json"

    local p; read -r -a p <<<"$(free_ports 8)"
    local plain=${p[0]} sasl_plain=${p[1]} sasl_ssl=${p[2]} ssl=${p[3]} wrong=${p[4]} expired=${p[5]} ctl=${p[6]} reauth=${p[7]}
    local jaas_plain="org.apache.kafka.common.security.plain.PlainLoginModule required user_admin=\"$admin_pw\" user_reader=\"$reader_pw\";"
    cat >"$STATE/node.properties" <<EOF
node.id=1
process.roles=broker,controller
listeners=PLAINTEXT://127.0.0.1:$plain,SASL_PLAINTEXT://127.0.0.1:$sasl_plain,SASL_SSL://127.0.0.1:$sasl_ssl,SSL://127.0.0.1:$ssl,WRONGHOST://127.0.0.1:$wrong,EXPIRED://127.0.0.1:$expired,REAUTH://127.0.0.1:$reauth,CONTROLLER://127.0.0.1:$ctl
advertised.listeners=PLAINTEXT://127.0.0.1:$plain,SASL_PLAINTEXT://127.0.0.1:$sasl_plain,SASL_SSL://127.0.0.1:$sasl_ssl,SSL://127.0.0.1:$ssl,WRONGHOST://127.0.0.1:$wrong,EXPIRED://127.0.0.1:$expired,REAUTH://127.0.0.1:$reauth
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,WRONGHOST:SSL,EXPIRED:SSL,REAUTH:SASL_SSL,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:$ctl
log.dirs=$STATE/data

authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin;User:ANONYMOUS
ssl.principal.mapping.rules=RULE:^CN=([^,]*).*\$/\$1/,DEFAULT

ssl.keystore.type=PEM
ssl.keystore.location=$c/broker.pem
ssl.truststore.type=PEM
ssl.truststore.location=$c/ca.pem
listener.name.ssl.ssl.client.auth=required
listener.name.wronghost.ssl.keystore.location=$c/wronghost.pem
listener.name.expired.ssl.keystore.location=$c/expired.pem

sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN,OAUTHBEARER
# SASL sessions with a lifetime: kdp must read it (and renew before it ends)
listener.name.sasl_ssl.connections.max.reauth.ms=3600000
# sessions of 5 s: a long run (the exporter) must authenticate anew before each ends, or the
# broker closes the connection under it
listener.name.reauth.connections.max.reauth.ms=5000
listener.name.reauth.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.reauth.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# one mechanism only here, so that a client asking for another is refused
listener.name.sasl_plaintext.sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.oauthbearer.jwks.endpoint.url=$jwks
# Kafka 4.4 refuses to start without an audience and an issuer to check (the IdP sets both)
sasl.oauthbearer.expected.audience=kdp-secure
sasl.oauthbearer.expected.issuer=https://kdp-idp.invalid
EOF
    local l m
    for l in sasl_ssl sasl_plaintext; do
        for m in scram-sha-512 scram-sha-256; do
            echo "listener.name.$l.$m.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
        done
        echo "listener.name.$l.plain.sasl.jaas.config=$jaas_plain"
        echo "listener.name.$l.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
        echo "listener.name.$l.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
    done >>"$STATE/node.properties"
    cat >>"$STATE/node.properties" <<EOF

num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
# as in scripts/kafka-cluster.sh: Scenario's transactions last up to an hour (a killed
# producer's stays open that long)
transaction.max.timeout.ms=3600000
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
EOF
    chmod 600 "$STATE/node.properties"

    local jvm=("$JAVA" "$LOG_OPT" -Dkafka.logs.dir="$STATE")
    "${jvm[@]}" -Xmx256m -cp "$LIB/*" kafka.tools.StorageTool format -t "$CLUSTER_ID" \
        -c "$STATE/node.properties" --standalone \
        --add-scram "SCRAM-SHA-512=[name=admin,password=$admin_pw]" \
        --add-scram "SCRAM-SHA-256=[name=admin,password=$admin_pw]" \
        --add-scram "SCRAM-SHA-512=[name=reader,password=$reader_pw]" \
        >"$STATE/format.log" 2>&1 || { log "format failed"; cat "$STATE/format.log" >&2; cmd_stop; exit 1; }

    setsid bash -c 'echo $$ >"$1/node.pid"; shift; exec "$@"' _ "$STATE" \
        "${jvm[@]}" -Xms256m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
        -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="$jwks" \
        -cp "$LIB/*" kafka.Kafka "$STATE/node.properties" \
        </dev/null >"$STATE/stdout.log" 2>&1 &

    local cp="$LIB/*:$CLASSES" boot="127.0.0.1:$plain"
    local scen=("$JAVA" -cp "$cp" dev.kdp.it.Scenario)
    if ! "${scen[@]}" wait-cluster --bootstrap "$boot" --brokers 1 --timeout-seconds "$READY_TIMEOUT" \
        >"$STATE/ready.json" 2>"$STATE/ready.log"; then
        log "node not ready"; tail -n 40 "$STATE/stdout.log" "$STATE/ready.log" >&2; cmd_stop; exit 1
    fi
    for t in secure-read secure-hidden; do
        "${scen[@]}" create-topic --bootstrap "$boot" --topic "$t" --partitions 1 --replication-factor 1 \
            >"$STATE/create-$t.json" 2>>"$STATE/setup.log"
        "${scen[@]}" idempotent --bootstrap "$boot" --topic "$t" --partition 0 --records 3 \
            >"$STATE/produce-$t.json" 2>>"$STATE/setup.log"
    done
    # kafka.logs.dir: the log configuration writes there (unset, it is a directory named
    # "${sys:kafka.logs.dir}" in the working directory)
    "$JAVA" -cp "$LIB/*" "$LOG_OPT" \
        -Dkafka.logs.dir="$STATE" "$ACL_COMMAND" --bootstrap-server "$boot" --add --allow-principal User:reader \
        --operation Read --topic secure-read >>"$STATE/setup.log" 2>&1

    # client properties files (the same for kdp and kafka-transactions.sh)
    local trust="ssl.truststore.type=PEM
ssl.truststore.location=$c/ca.pem"
    scram() { # file, protocol, mechanism, user, password
        printf 'security.protocol=%s\nsasl.mechanism=%s\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";\n%s\n' \
            "$2" "$3" "$4" "$5" "$trust" >"$STATE/$1.properties"
    }
    scram scram512 SASL_SSL SCRAM-SHA-512 admin "$admin_pw"
    scram scram256 SASL_SSL SCRAM-SHA-256 admin "$admin_pw"
    scram reader SASL_SSL SCRAM-SHA-512 reader "$reader_pw"
    scram sasl-plaintext SASL_PLAINTEXT SCRAM-SHA-512 admin "$admin_pw"
    local wrong_pw; wrong_pw=$(secret)
    scram wrong-password SASL_SSL SCRAM-SHA-512 admin "$wrong_pw"
    printf 'security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="%s";\n%s\n' \
        "$admin_pw" "$trust" >"$STATE/plain.properties"
    printf 'security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url=file://%s\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n%s\n' \
        "$STATE/token.jwt" "$trust" >"$STATE/oauth-file.properties"
    printf 'security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url=http://127.0.0.1:%s/token\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="kdp-client" clientSecret="%s" scope="kafka";\n%s\n' \
        "$idp_port" "$client_secret" "$trust" >"$STATE/oauth-cc.properties"
    printf 'security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n%s\n' "$trust" >"$STATE/gssapi.properties"
    printf 'security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location=%s\n%s\n' \
        "$c/client.pem" "$trust" >"$STATE/mtls.properties"
    printf 'security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location=%s\nssl.key.password=%s\n%s\n' \
        "$c/client-enc.pem" "$KEY_PW" "$trust" >"$STATE/mtls-encrypted.properties"
    printf 'security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location=%s\nssl.key.password=%s\n%s\n' \
        "$c/client-pbes1.pem" "$KEY_PW" "$trust" >"$STATE/mtls-pbes1.properties"
    # the PBES2 one inline: each PEM as one property value, its base64 on one line (as Java reads it)
    oneline() { awk '/^-----BEGIN/ { b = $0; next } /^-----END/ { e = $0; next } { s = s $0 }
        END { printf "%s\\n%s\\n%s", b, s, e }' "$1"; }
    printf 'security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.key=%s\nssl.keystore.certificate.chain=%s\nssl.key.password=%s\n%s\n' \
        "$(oneline "$c/client-enc.key")" "$(oneline "$c/client.crt")" "$KEY_PW" "$trust" \
        >"$STATE/mtls-encrypted-inline.properties"
    printf 'security.protocol=SSL\n%s\n' "$trust" >"$STATE/ssl-no-client-cert.properties"
    printf 'security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="%s";\nssl.truststore.type=PEM\nssl.truststore.location=%s\n' \
        "$admin_pw" "$c/other-ca.pem" >"$STATE/untrusted.properties"
    chmod 600 "$STATE"/*.properties

    cat >"$STATE/secure.env" <<EOF
KDP_SECURE_DIR=$STATE
KDP_SECURE_PLAINTEXT=127.0.0.1:$plain
KDP_SECURE_SASL_PLAINTEXT=127.0.0.1:$sasl_plain
KDP_SECURE_SASL_SSL=127.0.0.1:$sasl_ssl
KDP_SECURE_SSL=127.0.0.1:$ssl
KDP_SECURE_WRONGHOST=127.0.0.1:$wrong
KDP_SECURE_EXPIRED=127.0.0.1:$expired
KDP_SECURE_REAUTH=127.0.0.1:$reauth
KDP_SECURE_CLASSPATH=$cp
KDP_SECURE_JAVA=$JAVA
KDP_SECURE_KAFKA_VERSION=$VERSION
KDP_SECURE_SECRETS="$admin_pw $reader_pw $wrong_pw $client_secret $KEY_PW"
EOF
    log "ready: plaintext=127.0.0.1:$plain sasl_ssl=127.0.0.1:$sasl_ssl ssl=127.0.0.1:$ssl env=${STATE#"$ROOT/"}/secure.env"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) cat "$STATE/secure.env" ;;
    *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
