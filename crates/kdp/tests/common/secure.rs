//! The secured Kafka node of `scripts/kafka-secure.sh` (its `secure.env`):
//! listeners, the client properties files it writes, and the secrets that
//! must appear in no output.

use super::{Env, Run};

pub struct Secure {
    pub dir: String,
    pub plaintext: String,
    pub sasl_plaintext: String,
    pub sasl_ssl: String,
    pub ssl: String,
    pub wronghost: String,
    pub expired: String,
    /// SASL_SSL (SCRAM-SHA-512) with 5-second sessions (connections.max.reauth.ms).
    pub reauth: String,
    pub classpath: String,
    pub java: String,
    pub secrets: Vec<String>,
}

/// The node's environment; panics (the test fails, never skips) when the
/// node is not there.
pub fn secure() -> Secure {
    let need = |k: &str| {
        std::env::var(k).unwrap_or_else(|_| {
            panic!(
                "{k} is not set: these tests need the secured Kafka node. Run scripts/test.sh, or \
                 `bash scripts/kafka-secure.sh start; set -a; . target/kafka-secure/secure.env; set +a` first"
            )
        })
    };
    Secure {
        dir: need("KDP_SECURE_DIR"),
        plaintext: need("KDP_SECURE_PLAINTEXT"),
        sasl_plaintext: need("KDP_SECURE_SASL_PLAINTEXT"),
        sasl_ssl: need("KDP_SECURE_SASL_SSL"),
        ssl: need("KDP_SECURE_SSL"),
        wronghost: need("KDP_SECURE_WRONGHOST"),
        expired: need("KDP_SECURE_EXPIRED"),
        reauth: need("KDP_SECURE_REAUTH"),
        classpath: need("KDP_SECURE_CLASSPATH"),
        java: std::env::var("KDP_SECURE_JAVA").unwrap_or_else(|_| "java".into()),
        secrets: need("KDP_SECURE_SECRETS")
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    }
}

impl Secure {
    /// The path of the client properties file `name` the script wrote.
    pub fn props(&self, name: &str) -> String {
        format!("{}/{name}.properties", self.dir)
    }

    /// Every way in as the admin user: (properties file, listener), with
    /// `None` for the PLAINTEXT listener (where ANONYMOUS is a super user, the
    /// answer the others are compared with).
    pub fn admin_ways(&self) -> Vec<(Option<&'static str>, &str)> {
        vec![
            (None, &self.plaintext),
            (Some("scram512"), &self.sasl_ssl),
            (Some("scram256"), &self.sasl_ssl),
            (Some("plain"), &self.sasl_ssl),
            (Some("oauth-file"), &self.sasl_ssl),
            (Some("oauth-cc"), &self.sasl_ssl),
            (Some("sasl-plaintext"), &self.sasl_plaintext),
            (Some("mtls"), &self.ssl),
            (Some("mtls-encrypted"), &self.ssl),
            (Some("mtls-encrypted-inline"), &self.ssl),
            (Some("mtls-pbes1"), &self.ssl),
        ]
    }

    /// The node as a `common::Env` on its PLAINTEXT listener, for Scenario
    /// and Kafka's tools (ANONYMOUS is a super user there).
    pub fn env(&self) -> Env {
        let ready = std::fs::read_to_string(format!("{}/ready.json", self.dir)).unwrap_or_default();
        let tv = ready
            .split("\"transaction.version\":")
            .nth(1)
            .and_then(|s| s.chars().next())
            .and_then(|c| c.to_digit(10))
            .unwrap_or(0);
        Env {
            bootstrap: self.plaintext.clone(),
            classpath: self.classpath.clone(),
            java: self.java.clone(),
            state_dir: self.dir.clone(),
            brokers: vec![(1, self.plaintext.clone())],
            jmx: String::new(),
            kafka_version: std::env::var("KDP_SECURE_KAFKA_VERSION").unwrap_or_default(),
            txn_version: if tv >= 2 { 2 } else { 1 },
        }
    }

    /// No password, client secret or token appears in any output.
    pub fn assert_no_secret(&self, r: &Run) {
        let token = std::fs::read_to_string(format!("{}/token.jwt", self.dir)).unwrap_or_default();
        let token = token.trim();
        for s in self.secrets.iter().map(String::as_str).chain([token]) {
            if s.is_empty() {
                continue;
            }
            assert!(!r.stdout.contains(s), "a secret is in stdout");
            assert!(!r.stderr.contains(s), "a secret is in stderr");
        }
    }
}
