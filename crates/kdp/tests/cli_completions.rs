//! Shell completions and manual pages as a user meets them: the bash
//! function loaded in a real bash completes `kdp tr<TAB>`, `kdp transactions
//! l<TAB>`, `--output <TAB>` and context names; zsh and fish accept their
//! scripts; `man -l` renders every page without a warning; and both are
//! generated from the same definitions (every subcommand in each).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "kdp-completions-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn script(shell: &str, dir: &Dir) -> PathBuf {
    let out = Command::new(KDP)
        .args(["completions", shell])
        .output()
        .expect("kdp completions");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.is_empty());
    let p = dir.0.join(format!("kdp.{shell}"));
    std::fs::write(&p, &out.stdout).unwrap();
    p
}

/// The contexts `prod-eu` and `staging`, in the config directory `xdg`.
fn add_contexts(xdg: &Path) {
    for name in ["prod-eu", "staging"] {
        let st = Command::new(KDP)
            .args(["context", "add", name, "--bootstrap-server", "h:1"])
            .env("XDG_CONFIG_HOME", xdg)
            .output()
            .unwrap();
        assert!(st.status.success());
    }
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What bash's completion of `words` (the last one being completed) offers,
/// through the function `complete -p kdp` names, as bash calls it on TAB.
fn bash_complete(script: &Path, xdg: &Path, words: &[&str]) -> Vec<String> {
    let bin_dir = Path::new(KDP).parent().unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\n\
         f=$(complete -p kdp | sed -E 's/.*-F ([^ ]+).*/\\1/')\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         \"$f\" kdp \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len() - 1
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn bash_completes_subcommands_flags_values_and_contexts() {
    let dir = Dir::new();
    let bash = script("bash", &dir);
    let xdg = dir.0.join("config");
    assert_eq!(bash_complete(&bash, &xdg, &["kdp", "tr"]), ["transactions"]);
    let sub = bash_complete(&bash, &xdg, &["kdp", "transactions", "l"]);
    assert_eq!(sub, ["list"]);
    let mut outputs = bash_complete(&bash, &xdg, &["kdp", "find-hanging", "--output", ""]);
    outputs.sort();
    assert_eq!(outputs, ["json", "jsonl", "table", "wide"]);
    let flags = bash_complete(&bash, &xdg, &["kdp", "transactions", "list", "--boot"]);
    assert_eq!(flags, ["--bootstrap-server"]);
    // context names, read from the contexts file when completing
    add_contexts(&xdg);
    let names = bash_complete(&bash, &xdg, &["kdp", "describe", "--context", "pr"]);
    assert_eq!(names, ["prod-eu"]);
    let names = bash_complete(&bash, &xdg, &["kdp", "context", "use", ""]);
    assert_eq!(names, ["prod-eu", "staging"]);
}

#[test]
fn zsh_and_fish_accept_their_scripts() {
    let dir = Dir::new();
    for (shell, check) in [("zsh", "zsh"), ("fish", "fish")] {
        assert!(
            have(check),
            "{check} is not installed (scripts/install-deps.sh installs it)"
        );
        let s = script(shell, &dir);
        let out = Command::new(check).arg("-n").arg(&s).output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{check} -n: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The subcommands `kdp --help` lists (the definitions' own listing).
fn subcommands(args: &[&str]) -> Vec<String> {
    let out = Command::new(KDP).args(args).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let list = help
        .split("Commands:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("no commands in {help}"));
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn man_pages_render_without_warnings_and_match_the_completions() {
    assert!(
        have("man"),
        "man is not installed (scripts/install-deps.sh installs man-db)"
    );
    let dir = Dir::new();
    let pages = dir.0.join("man");
    let out = Command::new(KDP)
        .args(["man", "--dir"])
        .arg(&pages)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let top = subcommands(&[]);
    assert!(top.len() >= 15, "{top:?}");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in &files {
        let out = Command::new("man")
            .arg("-l")
            .arg(f)
            .env("MANWIDTH", "80")
            .env("MAN_KEEP_FORMATTING", "")
            .env("LC_ALL", "C.UTF-8")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", f.display());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "man -l {} warned",
            f.display()
        );
        assert!(!out.stdout.is_empty());
    }
    let rendered = Command::new("man")
        .arg("-l")
        .arg(pages.join("kdp.1"))
        .env("MANWIDTH", "200")
        .output()
        .unwrap();
    let rendered = String::from_utf8_lossy(&rendered.stdout).into_owned();
    let bash = std::fs::read_to_string(script("bash", &dir)).unwrap();
    let fish = std::fs::read_to_string(script("fish", &dir)).unwrap();
    for name in &top {
        assert!(
            rendered.contains(&format!("kdp-{name}(1)")),
            "{name} not in kdp(1)"
        );
        assert!(
            pages.join(format!("kdp-{name}.1")).exists(),
            "no page for {name}"
        );
        assert!(
            bash.contains(&format!("kdp__{}", name.replace('-', "__")))
                || bash.contains(&format!(" {name} ")),
            "{name} not in bash"
        );
        assert!(
            fish.contains(&format!("-a \"{name}\"")),
            "{name} not in fish"
        );
    }
    for name in subcommands(&["transactions"]) {
        assert!(
            pages.join(format!("kdp-transactions-{name}.1")).exists(),
            "no page for transactions {name}"
        );
        assert!(
            fish.contains(&format!("-a \"{name}\"")),
            "{name} not in fish"
        );
    }
}

/// Every verdict and flag is defined in the help of the command that prints
/// it, and `kdp explain` answers the exceptions operators search for.
#[test]
fn help_defines_every_term_and_explain_maps_the_exceptions() {
    let help = |args: &[&str]| {
        let out = Command::new(KDP).args(args).arg("--help").output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let defined = |text: &str, term: &str| {
        text.lines()
            .any(|l| l.trim_start().starts_with(&format!("{term} ")) && l.starts_with("  "))
    };
    let find_hanging = help(&["find-hanging"]);
    for term in ["hanging", "stuck", "unknown", "ok"] {
        assert!(defined(&find_hanging, term), "{term} in\n{find_hanging}");
    }
    assert!(find_hanging.contains("BlockedRecords: high watermark minus LSO"));
    assert!(find_hanging.contains("a bare number is minutes"));
    let describe = help(&["describe"]);
    for term in ["fenced", "open-too-long", "orphan", "idle"] {
        assert!(defined(&describe, term), "{term} in\n{describe}");
    }
    for (name, answer) in [
        ("ProducerFencedException", "kdp transactions describe"),
        ("invalidproducerepochexception", "kdp transactions describe"),
        ("OutOfOrderSequenceException", "kdp compare-replicas"),
        ("UnknownProducerIdException", "kdp describe"),
        ("TransactionAbortableException", "kdp find-hanging"),
        ("stuck-consumer", "kdp find-hanging"),
        ("lso", "kdp force-terminate"),
        ("blocked", "kdp find-hanging"),
    ] {
        let out = Command::new(KDP).args(["explain", name]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}");
        assert!(text.contains(answer), "{name}: {text}");
    }
    let out = Command::new(KDP)
        .args(["explain", "NoSuchException"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// zsh, interactive in a real terminal (tmux), completes a context name
/// from the installed `_kdp` on TAB.
#[test]
fn zsh_completes_context_names_on_tab_in_a_terminal() {
    assert!(
        have("zsh") && have("tmux"),
        "zsh and tmux (scripts/install-deps.sh)"
    );
    let dir = Dir::new();
    let functions = dir.0.join("fn");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::copy(script("zsh", &dir), functions.join("_kdp")).unwrap();
    let xdg = dir.0.join("config");
    add_contexts(&xdg);
    std::fs::write(
        dir.0.join(".zshrc"),
        format!(
            "fpath=({} $fpath)\nautoload -Uz compinit && compinit -u -D\nPS1='ready%% '\n",
            functions.display()
        ),
    )
    .unwrap();
    let bin_dir = Path::new(KDP).parent().unwrap();
    let term = Terminal::start(
        "zsh",
        &format!(
            "env ZDOTDIR='{}' XDG_CONFIG_HOME='{}' PATH='{}':\"$PATH\" zsh -i",
            dir.0.display(),
            xdg.display(),
            bin_dir.display()
        ),
    );
    let completed = term.screen("ready%").and_then(|_| {
        term.send(&["kdp describe --context pr", "Tab"]);
        term.screen("--context prod-eu")
    });
    assert!(
        completed.is_some(),
        "no completion on the screen:\n{}",
        term.now()
    );
}

/// One shell, interactive in a tmux server of its own (killed on drop).
struct Terminal {
    socket: String,
}

impl Terminal {
    fn start(shell: &str, command: &str) -> Terminal {
        let term = Terminal {
            socket: format!("kdp-{shell}-{}", std::process::id()),
        };
        let started = term.tmux(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "20",
            "-s",
            "t",
            command,
        ]);
        assert!(started.status.success(), "tmux new-session");
        term
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux")
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn now(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// The screen once it shows `want` (polled for up to 20 s), else None.
    fn screen(&self, want: &str) -> Option<String> {
        for _ in 0..200 {
            let s = self.now();
            if s.contains(want) {
                return Some(s);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        None
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// elvish, interactive in a real terminal, completes subcommands and
/// context names from the script loaded in its rc.elv on TAB.
#[test]
fn elvish_completes_subcommands_and_context_names_on_tab_in_a_terminal() {
    assert!(
        have("elvish") && have("tmux"),
        "elvish and tmux (scripts/install-deps.sh)"
    );
    let dir = Dir::new();
    let xdg = dir.0.join("config");
    add_contexts(&xdg);
    let script = script("elvish", &dir);
    std::fs::create_dir_all(xdg.join("elvish")).unwrap();
    std::fs::write(
        xdg.join("elvish").join("rc.elv"),
        format!(
            "eval (slurp < '{}')\nset edit:prompt = {{ put 'ready> ' }}\n",
            script.display()
        ),
    )
    .unwrap();
    let bin_dir = Path::new(KDP).parent().unwrap();
    let term = Terminal::start(
        "elvish",
        &format!(
            "env XDG_CONFIG_HOME='{}' XDG_DATA_HOME='{}' PATH='{}':\"$PATH\" elvish",
            xdg.display(),
            dir.0.join("data").display(),
            bin_dir.display()
        ),
    );
    assert!(
        term.screen("ready>").is_some(),
        "no prompt:\n{}",
        term.now()
    );
    term.send(&["kdp tr", "Tab"]);
    let sub = term.screen("kdp transactions");
    term.send(&["C-u", "kdp describe --context pr", "Tab"]);
    let named = term.screen("--context prod-eu");
    // both names listed for an empty word, and nothing but context names
    term.send(&["C-u", "kdp context use ", "Tab"]);
    let listed = term.screen("staging");
    let last = term.now();
    assert!(sub.is_some(), "kdp tr<TAB>:\n{last}");
    assert!(named.is_some(), "--context pr<TAB>:\n{last}");
    let listed = listed.unwrap_or_else(|| panic!("context use <TAB>:\n{last}"));
    assert!(listed.contains("prod-eu"), "{listed}");
    assert!(!listed.contains("--bootstrap-server"), "{listed}");
}

/// PowerShell is not installable here (no package source serves it), so its
/// script is checked for the context hook's place: after the subcommand
/// path is known, before clap's switch, and answered from `kdp context list`.
#[test]
fn powershell_answers_context_names_before_the_subcommand_switch() {
    let dir = Dir::new();
    let ps = std::fs::read_to_string(script("powershell", &dir)).unwrap();
    let path = ps.find("}) -join ';'").expect("clap's subcommand path");
    let hook = ps
        .find("kdp context list --names")
        .expect("the context names hook");
    let switch = ps
        .find("$completions = @(switch ($command)")
        .expect("clap's switch");
    assert!(path < hook && hook < switch, "hook out of place:\n{ps}");
    assert_eq!(ps.matches("@(kdp context list --names").count(), 1);
    for named in [
        "'kdp;context;use'",
        "'kdp;context;show'",
        "'kdp;context;remove'",
    ] {
        assert!(ps[path..switch].contains(named), "{named}");
    }
    assert!(ps[path..switch].contains("'--context'"));
}
