#!/usr/bin/env python3
"""Checks that kdp's layers hold (Python 3, standard library only).

1. The crate graph, from `cargo metadata --format-version 1 --locked`:
   normal dependencies between workspace crates run one way,

       kdp-wire -> kdp-domain -> kdp-client -> kdp-workflows -> kdp

   (an arrow: "is depended on by"), kdp-server depends on kdp-wire (and
   kdp-scram) only,
   and kdp-domain's normal-dependency closure (features as kdp-domain
   asks for them) holds no async runtime, TLS or socket crate.
2. No module cycle inside a crate: for every workspace crate, a graph of
   its modules (one per file; `foo/mod.rs` and `foo.rs` are module `foo`)
   with an edge for each `mod` declaration and for each `crate::`,
   `super::` and `self::` path (resolved to the longest module prefix that
   exists), and every strongly connected component of more than one module
   named. `#[cfg(test)]` modules are left out, and so are the tokens a
   proc macro quotes (`quote!` and kin): their `crate::` is the crate the
   code is emitted into.

Exit status 0 when both hold, 1 otherwise.
"""

import json
import os
import re
import subprocess
import sys

# The layers, lowest first: a crate may depend only on crates before it.
LAYERS = ["kdp-wire", "kdp-domain", "kdp-client", "kdp-workflows", "kdp"]

# Every workspace crate's allowed normal dependencies on other workspace
# crates. A crate not listed here fails the check until it is placed.
ALLOWED = {
    "kdp-derive": set(),
    "kdp-scram": set(),
    "kdp-wire": {"kdp-derive"},
    "kdp-domain": {"kdp-wire"},
    "kdp-client": {"kdp-wire", "kdp-domain", "kdp-scram"},
    "kdp-workflows": {"kdp-wire", "kdp-domain", "kdp-client"},
    # kdp-scram: the SCRAM arithmetic both ends of an exchange share
    "kdp-server": {"kdp-wire", "kdp-scram"},
    # test-only (publish = false): the in-memory cluster of the paused-clock tests
    "kdp-test-support": {"kdp-wire", "kdp-client", "kdp-server"},
    "kdp": {"kdp-wire", "kdp-domain", "kdp-client", "kdp-workflows", "kdp-server"},
}

# What the pure domain must never pull in, in its dependencies or its
# dev-dependencies: an async runtime, TLS, crypto, HTTP, sockets.
FORBIDDEN_IN_DOMAIN = {
    "tokio",
    "mio",
    "rustls",
    "tokio-rustls",
    "ring",
    "hyper",
    "hyper-util",
    "socket2",
}
DOMAIN = "kdp-domain"

def metadata(root):
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        cwd=root,
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    return json.loads(out)


def check_crates(meta):
    """The crate graph's direction and the domain's closure; a list of problems."""
    problems = []
    members = set(meta["workspace_members"])
    by_id = {p["id"]: p for p in meta["packages"]}
    workspace = {by_id[i]["name"]: by_id[i] for i in members}
    names = set(workspace)
    for name, pkg in sorted(workspace.items()):
        if name not in ALLOWED:
            problems.append(f"crate {name}: not placed in a layer (add it to ALLOWED)")
            continue
        for dep in pkg["dependencies"]:
            if dep["kind"] is not None or dep["name"] not in names:
                continue
            if dep["name"] not in ALLOWED[name]:
                problems.append(f"crate {name} depends on {dep['name']}: against the layers")
    for a, b in zip(LAYERS, LAYERS[1:]):
        for low in LAYERS[: LAYERS.index(a) + 1]:
            if b in ALLOWED.get(low, set()):
                problems.append(f"ALLOWED lets {low} depend on {b}, a layer above it")
    if DOMAIN in workspace:
        closure = domain_closure(meta, workspace[DOMAIN])
        for name in sorted(closure.keys() & FORBIDDEN_IN_DOMAIN):
            problems.append(f"{DOMAIN}'s dependencies include {name} (via {closure[name]})")
        for dep in workspace[DOMAIN]["dependencies"]:
            if dep["kind"] == "dev" and dep["name"] in FORBIDDEN_IN_DOMAIN:
                problems.append(f"{DOMAIN}'s dev-dependencies include {dep['name']}")
    else:
        problems.append(f"no crate {DOMAIN} in the workspace")
    return problems


def domain_closure(meta, root):
    """Every package in `root`'s normal dependencies, each with the path
    that reached it, features resolved as the dependents ask for them (not
    unified over the workspace, as `cargo metadata`'s resolve graph is)."""
    by_id = {p["id"]: p for p in meta["packages"]}
    # the resolved package of each (dependent id, dependency name)
    resolved = {}
    for node in meta["resolve"]["nodes"]:
        for d in node["deps"]:
            pkg = by_id[d["pkg"]]
            resolved[(node["id"], pkg["name"])] = d["pkg"]
    features = {}  # id -> set of enabled features
    via = {}
    work = [(root["id"], {"default"}, root["name"])]
    while work:
        pid, asked, path = work.pop()
        pkg = by_id[pid]
        have = features.setdefault(pid, set())
        new = expand(pkg, asked) - have
        if not new and pid in via:
            continue
        have |= new
        via.setdefault(pid, path)
        enabled_deps, dep_features = optional_deps(pkg, have)
        for dep in pkg["dependencies"]:
            if dep["kind"] is not None:
                continue
            if dep["optional"] and dep.get("rename", dep["name"]) not in enabled_deps and dep[
                "name"
            ] not in enabled_deps:
                continue
            key = dep.get("rename") or dep["name"]
            target = resolved.get((pid, dep["name"]))
            if target is None:
                # target-specific or not resolved for this platform
                continue
            want = set(dep["features"]) | dep_features.get(key, set())
            if dep["uses_default_features"]:
                want.add("default")
            work.append((target, want, f"{path} -> {by_id[target]['name']}"))
    return {by_id[i]["name"]: via[i] for i in via if i != root["id"]}


def expand(pkg, asked):
    """The features `asked` turns on in `pkg`, transitively."""
    table = pkg.get("features", {})
    out, todo = set(), list(asked)
    while todo:
        f = todo.pop()
        if f in out:
            continue
        if f == "default" and "default" not in table:
            continue
        out.add(f)
        for entry in table.get(f, []):
            if "/" in entry or entry.startswith("dep:"):
                continue
            todo.append(entry)
    return out


def optional_deps(pkg, enabled):
    """The optional dependencies `enabled` features turn on, and the
    features they ask of each dependency."""
    table = pkg.get("features", {})
    deps, dep_features = set(), {}
    for f in enabled:
        for entry in table.get(f, []):
            if entry.startswith("dep:"):
                deps.add(entry[4:])
            elif "/" in entry:
                dep, feat = entry.split("/", 1)
                weak = dep.endswith("?")
                dep = dep.rstrip("?")
                if not weak:
                    deps.add(dep)
                dep_features.setdefault(dep, set()).add(feat)
        # an optional dependency's implicit feature of the same name
        if f not in table:
            deps.add(f)
    return deps, dep_features


# --- module graph -----------------------------------------------------------

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
QUOTE = r"\b(?:quote|quote_spanned|parse_quote|parse_quote_spanned)\s*!\s*[(\[{]"
TOKEN = re.compile(
    r"(?P<quote>" + QUOTE + r")|(?P<attr>#!?\[)|(?P<mod>\bmod\s+(?P<modname>" + IDENT + r")\s*(?P<modend>[;{]))"
    r"|(?P<path>(?:\$)?\b(?:crate|super|self)\s*::)|(?P<open>\{)|(?P<close>\})"
)


def strip(text):
    """`text` with comments, string and char literals blanked (lengths kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not re.match(r"\w", text[i - 1 : i] or " "):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # a char literal ('x', '\n', '\u{..}'), else a lifetime
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def attribute_end(code, start):
    """The index after the attribute that starts at `start` (`#[`)."""
    depth, j = 0, start + 1
    while j < len(code):
        if code[j] == "[":
            depth += 1
        elif code[j] == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(code)


def block_end(code, open_at):
    """The index after the delimiter matching the `{`, `(` or `[` at `open_at`."""
    opening = code[open_at]
    closing = {"{": "}", "(": ")", "[": "]"}[opening]
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == opening:
            depth += 1
        elif code[j] == closing:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


def use_paths(code, at):
    """The paths written at `at` (just after `crate::`, `super::` or
    `self::`), a use tree's braces expanded: lists of segments."""
    segments, j = [], at
    while True:
        m = re.compile(r"\s*(" + IDENT + r"|\{|\*)").match(code, j)
        if not m:
            return [segments], j
        tok = m.group(1)
        j = m.end()
        if tok == "*":
            return [segments], j
        if tok == "{":
            out = []
            while True:
                inner, j = use_paths(code, j)
                out.extend(segments + p for p in inner)
                rename = re.compile(r"\s*as\s+" + IDENT).match(code, j)
                if rename:
                    j = rename.end()
                m = re.compile(r"\s*([,}])").match(code, j)
                if not m:
                    return out, j
                j = m.end()
                if m.group(1) == "}":
                    return out, j
                if re.compile(r"\s*\}").match(code, j):
                    j = re.compile(r"\s*\}").match(code, j).end()
                    return out, j
        segments = segments + [tok]
        m = re.compile(r"\s*::").match(code, j)
        if not m:
            return [segments], j
        j = m.end()


def scan_file(path):
    """The `mod` declarations of a file (name, whether #[cfg(test)]) and
    its paths as (base, segments): base is ("crate",), or the inline module
    nesting and the number of `super`s."""
    with open(path, encoding="utf-8") as f:
        code = strip(f.read())
    mods, paths = [], []
    scopes = []  # inline modules: (name, end index)
    pending_test = False
    i = 0
    while True:
        m = TOKEN.search(code, i)
        if not m:
            break
        while scopes and m.start() >= scopes[-1][1]:
            scopes.pop()
        if m.group("quote"):
            i = block_end(code, m.end() - 1)
            pending_test = False
            continue
        if m.group("attr"):
            end = attribute_end(code, m.start())
            attr = re.sub(r"\s+", "", code[m.start() : end])
            if attr in ("#[cfg(test)]",):
                pending_test = True
            i = end
            continue
        if m.group("mod"):
            name = m.group("modname")
            if m.group("modend") == ";":
                if not scopes:
                    mods.append((name, pending_test))
                i = m.end()
            else:
                brace = m.end() - 1
                end = block_end(code, brace)
                if pending_test:
                    i = end  # a test module: left out whole
                else:
                    scopes.append((name, end))
                    i = m.end()
            pending_test = False
            continue
        pending_test = False
        if m.group("path"):
            word = re.match(r"\$?(\w+)", m.group("path")).group(1)
            found, end = use_paths(code, m.end())
            inline = [s[0] for s in scopes]
            for segs in found:
                supers = 0
                rest = segs
                if word == "super":
                    supers = 1
                    while rest and rest[0] == "super":
                        supers += 1
                        rest = rest[1:]
                paths.append((word, tuple(inline), supers, rest))
            i = max(end, m.end())
            continue
        i = m.end()
    return mods, paths


def module_tree(root_file):
    """Every file module reachable from `root_file`: path tuple -> file."""
    modules = {(): root_file}
    todo = [()]
    decls = {}
    while todo:
        mod = todo.pop()
        file = modules[mod]
        mods, _ = scan_file(file)
        base = os.path.dirname(file)
        name = os.path.basename(file)
        if mod and name not in ("mod.rs",):
            base = os.path.join(base, os.path.splitext(name)[0])
        decls[mod] = []
        for child, test in mods:
            if test:
                continue
            for cand in (os.path.join(base, child + ".rs"), os.path.join(base, child, "mod.rs")):
                if os.path.exists(cand):
                    modules[mod + (child,)] = cand
                    decls[mod].append(mod + (child,))
                    todo.append(mod + (child,))
                    break
    return modules, decls


def module_graph(root_file):
    modules, decls = module_tree(root_file)
    edges = {m: set(decls.get(m, [])) for m in modules}
    for mod, file in modules.items():
        _, paths = scan_file(file)
        for word, inline, supers, rest in paths:
            if word == "crate":
                base = ()
            else:
                here = mod + inline
                base = here[: len(here) - supers] if supers <= len(here) else ()
            full = base + tuple(rest)
            # the longest prefix that is a file module
            target = None
            for k in range(len(full), -1, -1):
                if full[:k] in modules:
                    target = full[:k]
                    break
            if target is not None and target != mod:
                edges[mod].add(target)
    return modules, edges


def cycles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                scc = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    scc.append(w)
                    if w == node:
                        break
                if len(scc) > 1:
                    out.append(sorted(scc))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def name_of(mod):
    return "crate" if not mod else "::".join(mod)


def check_modules(meta):
    problems = []
    by_id = {p["id"]: p for p in meta["packages"]}
    for pid in sorted(meta["workspace_members"], key=lambda i: by_id[i]["name"]):
        pkg = by_id[pid]
        for target in pkg["targets"]:
            kinds = set(target["kind"])
            if not kinds & {"lib", "bin", "proc-macro"}:
                continue
            _, edges = module_graph(target["src_path"])
            for scc in cycles(edges):
                problems.append(
                    f"{pkg['name']} ({target['name']}): module cycle: "
                    + ", ".join(name_of(m) for m in scc)
                )
    return problems


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    meta = metadata(root)
    problems = check_crates(meta)
    problems += check_modules(meta)
    for p in problems:
        print(f"check-layers: {p}", file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("check-layers: the crates depend one way and no module cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
