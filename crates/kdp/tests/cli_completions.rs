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
    for name in ["prod-eu", "staging"] {
        let st = Command::new(KDP)
            .args(["context", "add", name, "--bootstrap-server", "h:1"])
            .env("XDG_CONFIG_HOME", &xdg)
            .output()
            .unwrap();
        assert!(st.status.success());
    }
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
    // powershell cannot be checked here; it is at least generated
    script("powershell", &dir);
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
    for name in ["prod-eu", "staging"] {
        let st = Command::new(KDP)
            .args(["context", "add", name, "--bootstrap-server", "h:1"])
            .env("XDG_CONFIG_HOME", &xdg)
            .output()
            .unwrap();
        assert!(st.status.success());
    }
    std::fs::write(
        dir.0.join(".zshrc"),
        format!(
            "fpath=({} $fpath)\nautoload -Uz compinit && compinit -u -D\nPS1='ready%% '\n",
            functions.display()
        ),
    )
    .unwrap();
    let socket = format!("kdp-zsh-{}", std::process::id());
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux")
    };
    let bin_dir = Path::new(KDP).parent().unwrap();
    let shell = format!(
        "env ZDOTDIR='{}' XDG_CONFIG_HOME='{}' PATH='{}':\"$PATH\" zsh -i",
        dir.0.display(),
        xdg.display(),
        bin_dir.display()
    );
    assert!(tmux(&[
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        "20",
        "-s",
        "z",
        &shell
    ])
    .status
    .success());
    let screen = |want: &str| {
        for _ in 0..200 {
            let out = tmux(&["capture-pane", "-p", "-t", "z"]);
            let s = String::from_utf8_lossy(&out.stdout).into_owned();
            if s.contains(want) {
                return Some(s);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        None
    };
    let ready = screen("ready%");
    let completed = ready.and_then(|_| {
        tmux(&["send-keys", "-t", "z", "kdp describe --context pr", "Tab"]);
        screen("--context prod-eu")
    });
    let last =
        String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "z"]).stdout).into_owned();
    let _ = tmux(&["kill-server"]);
    assert!(completed.is_some(), "no completion on the screen:\n{last}");
}
