//! `kdp completions SHELL`: a completion script generated from the clap
//! definitions (subcommands, flags, the values of enumerated flags), plus,
//! for every shell, context names read at completion time from
//! `kdp context list --names`.

use std::io::Write;

use clap_complete::Shell;

use crate::exit;

/// `kdp completions`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Install (then open a new shell):
  bash:  kdp completions bash > ~/.local/share/bash-completion/completions/kdp
  zsh:   kdp completions zsh > ~/.zfunc/_kdp     (with fpath+=~/.zfunc before compinit)
  fish:  kdp completions fish > ~/.config/fish/completions/kdp.fish
  powershell:  kdp completions powershell | Out-String | Invoke-Expression   (in $PROFILE)
  elvish:  kdp completions elvish > ~/.config/elvish/lib/kdp.elv     (with `use kdp` in rc.elv)
Every shell also completes context names (--context, kdp context use/show/remove) by
running `kdp context list --names`.")]
pub struct Args {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Wraps clap's `_kdp` so that context names complete where a context is
/// named; everything else is clap's.
const BASH_CONTEXTS: &str = r#"
# Context names, read when completing from `kdp context list --names`.
_kdp_with_contexts() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev=""
    if [[ ${COMP_CWORD} -gt 0 ]]; then
        prev="${COMP_WORDS[COMP_CWORD-1]}"
    fi
    if [[ "${prev}" == "--context" ]] || { [[ ${COMP_CWORD} -eq 3 && "${COMP_WORDS[1]}" == "context" ]] \
        && [[ "${COMP_WORDS[2]}" == "use" || "${COMP_WORDS[2]}" == "show" || "${COMP_WORDS[2]}" == "remove" ]]; }; then
        COMPREPLY=( $(compgen -W "$("${COMP_WORDS[0]}" context list --names 2>/dev/null)" -- "${cur}") )
        return 0
    fi
    _kdp "$@"
}
complete -F _kdp_with_contexts -o bashdefault -o default kdp
"#;

/// Context names for fish, from `kdp context list --names`.
const FISH_CONTEXTS: &str = "
complete -c kdp -l context -x -a '(kdp context list --names 2>/dev/null)'
complete -c kdp -n '__fish_seen_subcommand_from context; and __fish_seen_subcommand_from use show remove' -f -a '(kdp context list --names 2>/dev/null)'
";

/// Context names for zsh: the function the context values complete with.
const ZSH_CONTEXTS: &str = r#"(( $+functions[_kdp_contexts] )) ||
_kdp_contexts() {
    local -a names
    names=(${(f)"$(kdp context list --names 2>/dev/null)"})
    _describe -t contexts 'context' names
}

"#;

/// Context names for PowerShell: answered before clap's switch over the
/// subcommand path, which would offer nothing there.
const POWERSHELL_CONTEXTS: &str = r#"
    # Context names, read when completing from `kdp context list --names`.
    $typed = @($commandElements | ForEach-Object { $_.ToString() })
    if ($wordToComplete -ne '' -and $typed.Count -ge 2) { $typed = $typed[0..($typed.Count - 2)] }
    if ($typed[-1] -eq '--context' -or $command -in 'kdp;context;use', 'kdp;context;show', 'kdp;context;remove') {
        @(kdp context list --names 2>$null) | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
            [CompletionResult]::new($_, $_, [CompletionResultType]::ParameterValue, $_)
        }
        return
    }
"#;

/// The line of clap's PowerShell script after which the subcommand path is
/// known.
const POWERSHELL_PATH_KNOWN: &str = "}) -join ';'\n";

/// Context names for elvish, in place of clap's last line (which looks the
/// candidates up by the subcommand path).
const ELVISH_CONTEXTS: &str =
    "    # Context names, read when completing from `kdp context list --names`.
    if (or (and (> (count $words) 2) (eq $words[-2] --context)) ^
           (has-value [kdp';'context';'use kdp';'context';'show kdp';'context';'remove] $command)) {
        try { kdp context list --names 2>/dev/null | from-lines } catch { }
    } else {
        $completions[$command]
    }
}
";

/// clap's PowerShell script with context names completed.
fn powershell_with_contexts(script: &str) -> String {
    match script.find(POWERSHELL_PATH_KNOWN) {
        Some(at) => {
            let end = at + POWERSHELL_PATH_KNOWN.len();
            format!("{}{POWERSHELL_CONTEXTS}{}", &script[..end], &script[end..])
        }
        None => script.to_string(),
    }
}

/// clap's elvish script with context names completed.
fn elvish_with_contexts(script: &str) -> String {
    let last = "    $completions[$command]\n}\n";
    match script.rfind(last) {
        Some(at) => format!(
            "{}{ELVISH_CONTEXTS}{}",
            &script[..at],
            &script[at + last.len()..]
        ),
        None => script.to_string(),
    }
}

/// clap's zsh script with context values completed by `_kdp_contexts`
/// (defined before the script's last lines call `_kdp`).
fn zsh_with_contexts(script: &str) -> String {
    let with = script
        .replace(":CONTEXT:_default'", ":CONTEXT:_kdp_contexts'")
        .replace(
            "-- The context.:_default'",
            "-- The context.:_kdp_contexts'",
        );
    match with.rfind("if [ \"$funcstack[1]\" = \"_kdp\" ]; then") {
        Some(at) => format!("{}{ZSH_CONTEXTS}{}", &with[..at], &with[at..]),
        None => with,
    }
}

/// Writes the script for `args.shell` of `definition` (the whole command line).
pub fn run(args: Args, mut definition: clap::Command) -> i32 {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut definition, "kdp", &mut script);
    match args.shell {
        Shell::Bash => script.extend_from_slice(BASH_CONTEXTS.as_bytes()),
        Shell::Fish => script.extend_from_slice(FISH_CONTEXTS.as_bytes()),
        Shell::Zsh => {
            script = zsh_with_contexts(&String::from_utf8_lossy(&script)).into_bytes();
        }
        Shell::PowerShell => {
            script = powershell_with_contexts(&String::from_utf8_lossy(&script)).into_bytes();
        }
        Shell::Elvish => {
            script = elvish_with_contexts(&String::from_utf8_lossy(&script)).into_bytes();
        }
        _ => {}
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            fail!("cannot write output: {e}");
            exit::PARTIAL
        }
    }
}
