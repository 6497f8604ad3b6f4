//! `kdp context`: named clusters (a bootstrap list and client properties)
//! kept in `$XDG_CONFIG_HOME/kdp/contexts.json` (`~/.config/kdp/...` without
//! XDG_CONFIG_HOME), created readable by the user only, so that
//! `kdp find-hanging` needs no flags; and [`apply`], which fills a command's
//! connection flags in from the environment, the context and the
//! properties.
//!
//! Precedence, for the bootstrap list: `--bootstrap-server`, then
//! `KDP_BOOTSTRAP_SERVER`, then the context's, then `bootstrap.servers` of
//! the properties (`--command-config`, `--command-property`, the
//! context's). The context is `--context`, then `KDP_CONTEXT`, then the one
//! `kdp context use` chose. A context's properties come before the
//! command line's, so a flag overrides them one by one; its
//! `--command-config` is used when the command line gives none.
//!
//! A property value `env:VAR` or `file:PATH` is a reference: the secret is
//! read from the environment or the file when a command connects and is
//! never stored or printed.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::exit;
use crate::properties::{self, ClientArgs};

/// `kdp context`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Contexts live in $XDG_CONFIG_HOME/kdp/contexts.json (~/.config/kdp/contexts.json), created mode 0600.
A command's cluster is, in this order: --bootstrap-server, KDP_BOOTSTRAP_SERVER, the context's,
bootstrap.servers of the properties. The context is --context NAME, else KDP_CONTEXT, else the
one `kdp context use` chose. The context's properties apply first; --command-property overrides
them one by one, --command-config replaces the context's file.

Secrets: give a property as env:VAR or file:PATH (e.g. --command-property sasl.password=env:KAFKA_PW)
and only the reference is stored; kdp reads the value when it connects. `kdp context show` never
prints a secret value.

Examples:
  kdp context add prod --bootstrap-server b1:9092,b2:9092 --command-config /etc/kafka/admin.properties
  kdp context add dev --bootstrap-server localhost:9092 --command-property security.protocol=SASL_PLAINTEXT \\
      --command-property sasl.mechanism=SCRAM-SHA-512 --command-property sasl.username=ops \\
      --command-property sasl.password=env:KAFKA_PW
  kdp context use prod
  kdp find-hanging                      # against prod
  kdp --context dev transactions list")]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

/// The subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Sub {
    /// Add (or with --force replace) a context.
    Add {
        /// Its name.
        name: String,
        /// Brokers to bootstrap from.
        #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
        bootstrap_server: Option<String>,
        /// A Kafka client properties file, read each time the context is used.
        #[arg(long, value_name = "FILE")]
        command_config: Option<PathBuf>,
        /// A client property; repeatable. VALUE may be env:VAR or file:PATH.
        #[arg(long, value_name = "KEY=VALUE", value_parser = properties::parse_key_value)]
        command_property: Vec<(String, String)>,
        /// Make it the current context.
        #[arg(long = "use")]
        make_current: bool,
        /// Replace a context of that name.
        #[arg(long)]
        force: bool,
    },
    /// Make a context the current one.
    Use {
        /// The context.
        #[arg(value_name = "CONTEXT")]
        name: String,
    },
    /// List the contexts (the current one marked with *).
    List {
        /// Names only, one a line (for scripts and shell completion).
        #[arg(long)]
        names: bool,
    },
    /// Show a context (the current one by default); secrets are never printed.
    Show {
        /// The context.
        #[arg(value_name = "CONTEXT")]
        name: Option<String>,
    },
    /// Remove a context.
    Remove {
        /// The context.
        #[arg(value_name = "CONTEXT")]
        name: String,
    },
}

/// One context. `Debug` shows property keys only.
#[derive(Serialize, Deserialize, Clone, Default, PartialEq, Eq)]
pub struct Context {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap_server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_config: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub command_property: BTreeMap<String, String>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("bootstrap_server", &self.bootstrap_server)
            .field("command_config", &self.command_config)
            .field(
                "command_property_keys",
                &self.command_property.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The contexts file.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct File {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    #[serde(default)]
    pub contexts: BTreeMap<String, Context>,
}

/// Where the contexts live: `$XDG_CONFIG_HOME/kdp/contexts.json`, else
/// `$HOME/.config/kdp/contexts.json`.
pub fn path() -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h).join(".config"),
            None => return Err("neither XDG_CONFIG_HOME nor HOME is set".into()),
        },
    };
    Ok(base.join("kdp").join("contexts.json"))
}

impl File {
    /// The file at `path`; none yet is no context.
    pub fn load(path: &Path) -> Result<File, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Writes the file readable and writable by the user only (its
    /// directory 0700), replacing it at once.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("{}: {e}", path.display());
        if let Some(dir) = path.parent() {
            create_private_dir(dir).map_err(fail)?;
        }
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let mut f = private_file(&tmp).map_err(fail)?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.write_all(b"\n"))
            .and_then(|()| f.sync_all())
            .map_err(fail)?;
        std::fs::rename(&tmp, path).map_err(fail)
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // an existing file keeps its mode through open: make it private anyway
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(f)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::create(path)
}

/// A property whose value is a secret: never printed, and stored in plain
/// text only when the user typed it so.
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["password", "jaas", "secret", "token"]
        .iter()
        .any(|s| k.contains(s))
        || k == "ssl.keystore.key"
}

/// A stored value that refers to a secret instead of holding it.
fn reference(value: &str) -> Option<(&'static str, &str)> {
    if let Some(v) = value.strip_prefix("env:") {
        Some(("env", v))
    } else {
        value.strip_prefix("file:").map(|p| ("file", p))
    }
}

/// The value a stored property stands for: `env:VAR` and `file:PATH` read
/// now. Errors name the key and the reference, never a value.
fn resolve(key: &str, value: &str) -> Result<String, String> {
    match reference(value) {
        Some(("env", var)) => std::env::var(var)
            .map_err(|_| format!("{key}: the environment variable {var} is not set")),
        Some((_, path)) => std::fs::read_to_string(path)
            .map(|s| s.trim_end_matches(['\n', '\r']).to_string())
            .map_err(|e| format!("{key}: cannot read {path}: {e}")),
        None => Ok(value.to_string()),
    }
}

/// What a command's connection flags become once the environment (already
/// read by clap into `bootstrap`), the context and the properties are in.
/// `chosen` is `--context`/`KDP_CONTEXT`. The error is for stderr and exit 2.
pub fn apply(
    chosen: Option<&str>,
    bootstrap: &mut String,
    client: &mut ClientArgs,
) -> Result<(), String> {
    let contexts = match path() {
        Ok(file) => File::load(&file)?,
        Err(e) if chosen.is_some() => return Err(e),
        Err(_) => File::default(),
    };
    let picked = match chosen {
        Some(name) => Some((name.to_string(), "--context/KDP_CONTEXT")),
        None => contexts.current.clone().map(|c| (c, "the current context")),
    };
    if let Some((name, from)) = picked {
        let Some(ctx) = contexts.contexts.get(&name) else {
            let known: Vec<&str> = contexts.contexts.keys().map(String::as_str).collect();
            return Err(format!(
                "no context {name:?} ({from}); contexts: {}",
                if known.is_empty() {
                    "none (kdp context add NAME --bootstrap-server ...)".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        tracing::debug!(context = %name, ?ctx, "using context");
        let mut props = Vec::new();
        for (k, v) in &ctx.command_property {
            props.push((
                k.clone(),
                resolve(k, v).map_err(|e| format!("context {name}: {e}"))?,
            ));
        }
        props.append(&mut client.command_property);
        client.command_property = props;
        if client.command_config.is_none() {
            client.command_config = ctx.command_config.clone();
        }
        if bootstrap.trim().is_empty() {
            if let Some(b) = &ctx.bootstrap_server {
                *bootstrap = b.clone();
            }
        }
    }
    if bootstrap.trim().is_empty() {
        if let Some(b) = bootstrap_servers(client) {
            *bootstrap = b;
        }
    }
    if bootstrap.trim().is_empty() {
        return Err("no bootstrap server: give --bootstrap-server HOST:PORT, set \
                    KDP_BOOTSTRAP_SERVER, use a context (kdp context add NAME --bootstrap-server ...), \
                    or put bootstrap.servers in --command-config"
            .into());
    }
    Ok(())
}

/// `bootstrap.servers` of the properties, the command line's last. A file
/// that cannot be read is left for the command to report.
fn bootstrap_servers(client: &ClientArgs) -> Option<String> {
    let mut found = client
        .command_config
        .as_deref()
        .and_then(|p| properties::read(p).ok())
        .and_then(|pairs| {
            pairs
                .into_iter()
                .rev()
                .find(|(k, _)| k == "bootstrap.servers")
        })
        .map(|(_, v)| v);
    if let Some((_, v)) = client
        .command_property
        .iter()
        .rev()
        .find(|(k, _)| k == "bootstrap.servers")
    {
        found = Some(v.clone());
    }
    found.filter(|v| !v.trim().is_empty())
}

/// `kdp context ...`; `chosen` is `--context`/`KDP_CONTEXT`, the context
/// `show` shows without a name (else the current one).
pub fn run(args: Args, chosen: Option<&str>) -> i32 {
    let file = match path() {
        Ok(p) => p,
        Err(e) => {
            fail!("cannot find the contexts file: {e}");
            return exit::USAGE;
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match run_on(args.command, &file, chosen, &mut out) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("{}", crate::output::colour::error(&e));
            exit::USAGE
        }
    }
}

fn run_on(cmd: Sub, file: &Path, chosen: Option<&str>, out: &mut dyn Write) -> Result<(), String> {
    let mut contexts = File::load(file)?;
    let missing = |contexts: &File, name: &str| {
        let known: Vec<&str> = contexts.contexts.keys().map(String::as_str).collect();
        format!("no context {name:?}; contexts: {}", known.join(", "))
    };
    let io = |e: std::io::Error| e.to_string();
    match cmd {
        Sub::Add {
            name,
            bootstrap_server,
            command_config,
            command_property,
            make_current,
            force,
        } => {
            // a name is typed after --context and completed by the shells
            if name.is_empty() || name.starts_with('-') || name.contains(char::is_whitespace) {
                return Err(format!(
                    "context name {name:?}: must not be empty, start with '-' or contain blanks"
                ));
            }
            if contexts.contexts.contains_key(&name) && !force {
                return Err(format!(
                    "context {name:?} exists (--force replaces it, kdp context remove deletes it)"
                ));
            }
            if bootstrap_server.is_none() && command_config.is_none() {
                return Err("a context needs --bootstrap-server or --command-config".into());
            }
            let command_config = match command_config {
                Some(p) => Some(
                    std::fs::canonicalize(&p)
                        .map_err(|e| format!("--command-config {}: {e}", p.display()))?,
                ),
                None => None,
            };
            for (k, v) in &command_property {
                if is_secret(k) && reference(v).is_none() {
                    fail!(
                        "warning: {k} is stored as typed in {} (readable by you only); \
                         {k}=env:VAR or {k}=file:PATH keeps it out of the file",
                        file.display()
                    );
                }
            }
            let ctx = Context {
                bootstrap_server,
                command_config,
                command_property: command_property.into_iter().collect(),
            };
            contexts.contexts.insert(name.clone(), ctx);
            if make_current || contexts.current.is_none() {
                contexts.current = Some(name.clone());
            }
            contexts.save(file)?;
            writeln!(out, "context {name} saved in {}", file.display()).map_err(io)?;
        }
        Sub::Use { name } => {
            if !contexts.contexts.contains_key(&name) {
                return Err(missing(&contexts, &name));
            }
            contexts.current = Some(name.clone());
            contexts.save(file)?;
            writeln!(out, "current context: {name}").map_err(io)?;
        }
        Sub::List { names } => {
            for name in contexts.contexts.keys() {
                let current = contexts.current.as_deref() == Some(name.as_str());
                if names {
                    writeln!(out, "{name}")
                } else {
                    writeln!(out, "{} {name}", if current { "*" } else { " " })
                }
                .map_err(io)?;
            }
        }
        Sub::Show { name } => {
            let name = name.or_else(|| chosen.map(str::to_string));
            let Some(name) = name.or_else(|| contexts.current.clone()) else {
                return Err("no current context (kdp context use NAME)".into());
            };
            let Some(ctx) = contexts.contexts.get(&name) else {
                return Err(missing(&contexts, &name));
            };
            show(out, &name, contexts.current.as_deref() == Some(&name), ctx).map_err(io)?;
        }
        Sub::Remove { name } => {
            if contexts.contexts.remove(&name).is_none() {
                return Err(missing(&contexts, &name));
            }
            if contexts.current.as_deref() == Some(name.as_str()) {
                contexts.current = None;
            }
            contexts.save(file)?;
            writeln!(out, "context {name} removed").map_err(io)?;
        }
    }
    Ok(())
}

/// A context for people: references shown as such, secret values never.
fn show(out: &mut dyn Write, name: &str, current: bool, ctx: &Context) -> std::io::Result<()> {
    writeln!(
        out,
        "name:              {name}{}",
        if current { " (current)" } else { "" }
    )?;
    writeln!(
        out,
        "bootstrap-server:  {}",
        ctx.bootstrap_server.as_deref().unwrap_or("-")
    )?;
    writeln!(
        out,
        "command-config:    {}",
        ctx.command_config
            .as_deref()
            .map_or_else(|| "-".to_string(), |p| p.display().to_string())
    )?;
    let mut first = true;
    for (k, v) in &ctx.command_property {
        let shown = match reference(v) {
            Some(("env", var)) => format!("env:{var} (read from the environment when used)"),
            Some((_, p)) => format!("file:{p} (read from the file when used)"),
            None if is_secret(k) => "(secret, stored; not shown)".to_string(),
            None => v.clone(),
        };
        let label = if first { "command-property:" } else { "" };
        first = false;
        writeln!(out, "{label:<18} {k}={shown}")?;
    }
    if first {
        writeln!(out, "command-property:  -")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_references_or_hidden() {
        assert!(is_secret("sasl.password"));
        assert!(is_secret("sasl.jaas.config"));
        assert!(is_secret("ssl.keystore.key"));
        assert!(!is_secret("security.protocol"));
        let ctx = Context {
            bootstrap_server: Some("b:1".into()),
            command_config: None,
            command_property: [
                ("sasl.password".to_string(), "env:PW".to_string()),
                ("sasl.jaas.config".into(), "x password=\"hunter2\";".into()),
                ("security.protocol".into(), "SASL_SSL".into()),
            ]
            .into_iter()
            .collect(),
        };
        let mut out = Vec::new();
        show(&mut out, "p", true, &ctx).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("sasl.password=env:PW"), "{text}");
        assert!(text.contains("security.protocol=SASL_SSL"), "{text}");
        assert!(!format!("{ctx:?}").contains("hunter2"));
        let e = resolve("sasl.password", "env:KDP_TEST_SURELY_UNSET_VAR").unwrap_err();
        assert_eq!(
            e,
            "sasl.password: the environment variable KDP_TEST_SURELY_UNSET_VAR is not set"
        );
        assert_eq!(resolve("k", "plain").unwrap(), "plain");
    }

    #[test]
    fn the_properties_bootstrap_comes_last_and_the_command_line_wins() {
        let client = ClientArgs {
            command_config: None,
            command_property: vec![("bootstrap.servers".into(), "p:1".into())],
        };
        assert_eq!(bootstrap_servers(&client).as_deref(), Some("p:1"));
        assert_eq!(bootstrap_servers(&ClientArgs::default()), None);
    }
}
