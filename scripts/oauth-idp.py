#!/usr/bin/env python3
"""A minimal OpenID-style identity provider for kdp's secure-broker tests.

Serves GET /jwks.json (the RSA public key) and POST /token (OAuth 2
client-credentials grant, HTTP Basic client authentication), and writes one
signed token to a file for the static-token tests. Signing uses the openssl
CLI, so only the standard library is needed.

usage: oauth-idp.py STATE_DIR CLIENT_ID CLIENT_SECRET   (prints the port, then serves)
"""
import base64
import http.server
import json
import os
import subprocess
import sys
import time

STATE, CLIENT_ID, CLIENT_SECRET = sys.argv[1], sys.argv[2], sys.argv[3]
KEY = os.path.join(STATE, "idp-key.pem")
KID = "kdp-test-key"


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jwks():
    out = subprocess.run(["openssl", "rsa", "-in", KEY, "-noout", "-modulus"],
                         check=True, capture_output=True, text=True).stdout
    n = bytes.fromhex(out.strip().split("=", 1)[1])
    return {"keys": [{"kty": "RSA", "kid": KID, "use": "sig", "alg": "RS256",
                      "n": b64url(n), "e": b64url((65537).to_bytes(3, "big"))}]}


def token(sub, lifetime=3600):
    now = int(time.time())
    header = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": KID}).encode())
    claims = b64url(json.dumps({"sub": sub, "iat": now, "exp": now + lifetime,
                                "scope": "kafka", "aud": "kdp-secure",
                                "iss": "https://kdp-idp.invalid"}).encode())
    signing_input = f"{header}.{claims}".encode()
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", KEY], input=signing_input,
                         check=True, capture_output=True).stdout
    return f"{header}.{claims}.{b64url(sig)}"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/jwks.json":
            self.reply(200, jwks())
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = self.rfile.read(min(length, 65536)).decode(errors="replace")
        want = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if self.path != "/token" or "grant_type=client_credentials" not in form:
            self.reply(400, {"error": "invalid_request"})
        elif self.headers.get("Authorization") != want:
            self.reply(401, {"error": "invalid_client"})
        else:
            self.reply(200, {"access_token": token("admin"), "token_type": "Bearer",
                             "expires_in": 3600})


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(STATE, "token.jwt"), "w") as f:
    f.write(token("admin") + "\n")
print(server.server_address[1], flush=True)
server.serve_forever()
