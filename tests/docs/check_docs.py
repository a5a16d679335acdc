#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The generated man pages and bash completion against the programs.

usage: check_docs.py RDMAKIT DOCS_DIR SOURCE_DIR LIBRDMAKIT_SO [RDMAKIT_MESH]
       check_docs.py --self-test   (plants each fault the markdown checks look
                                    for, and checks that each is named)

- every option a table parses is documented: each command's (and table's)
  `--help`, which the parser's own table prints, lists exactly the options of
  its man page; every option row in the sources (src/cli, src/mesh) is in a
  page;
- every documented option parses: given to the program by its long name and
  by its letter it is taken (exit 0 before --help) or its value is refused
  naming that very option; every old spelling fails naming the new one;
- `man -l` renders every page, showing each option with its default (a flag
  none), within 80 columns (MANWIDTH=80); every --help fits 80 columns when
  its output is not a terminal;
- other programs' spellings (perftest's -x, ...): each alias is taken as the
  option it names, each refused one exits 2 naming rdmakit's way, and the
  man page lists them under OTHER PROGRAMS' SPELLINGS;
- the completion, loaded in bash with COMP_WORDS/COMP_CWORD set as bash sets
  them, offers every command, every option of every table, the values of
  options with choices, and device names (from a directory standing in for
  /sys/class/infiniband);
- no letter means two things across rdmakit's own tables (ping's rping and
  pingpong tables speak those programs' letters);
- every command and table answers --version; librdmakit(3) names every rk_
  function the library exports;
- the markdown pages (README.md, CONTRIBUTING.md, docs/**/*.md): every link
  and image to a file reaches one that exists, and every link to a section
  (file.md#anchor, or #anchor in the same page) reaches a heading with that
  GitHub anchor (lowercase, punctuation dropped, spaces to '-', a repeated
  heading's anchor suffixed -1, -2 ...); README.md has at most 350 lines;
- every command the built rdmakit lists has its page,
  docs/commands/rdmakit-CMD.md, and its man page (where built) shows that
  page's EXAMPLES section, every line of it; every example that runs
  rdmakit (or rdmakit-mesh, where built) parses: given --help it exits 0.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

failures = []
fail_prefix = "FAIL: "


def fail(msg):
    failures.append(msg)
    print(fail_prefix + msg)


def run(argv, env=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env, check=False)
    return p.returncode, p.stdout, p.stderr


def load_index(docs):
    rows = []
    with open(os.path.join(docs, "options.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(head, line.rstrip("\n").split("\t"))))
    tables = {}
    for r in rows:
        rows_of = tables.setdefault((r["page"], r["select"], r["speaks"]), [])
        if r["type"] != "table":  # the row that lists a table, options or none
            rows_of.append(r)
    return tables


def program(rdmakit, mesh, page, select):
    """argv that reaches a table: rdmakit CMD [WORDS] or rdmakit-mesh."""
    if page == "rdmakit-mesh":
        return [mesh]
    return [rdmakit, page[len("rdmakit-"):]] + (select.split() if select else [])


HELP_LINE = re.compile(r"^  (?:-(\S), |    )--([a-z0-9-]+)(?: (\S+))?\s+(.*)$")
HELP_MORE = re.compile(r"^ {31}(\S.*)$")  # an option's help, wrapped under its column
HELP_WIDTH = 80
REFUSED = ("gone", "alias", "foreign")  # rows --help does not show


def help_options(argv):
    """{long: (letter, its help with the wrapped lines joined)} from a
    table's text --help (not a terminal: HELP_WIDTH columns)."""
    env = dict(os.environ)
    env.pop("RDMAKIT_HELP_WIDTH", None)
    rc, out, err = run(argv + ["--help"], env=env)
    if rc != 0:
        fail("%s --help: exit %d: %s" % (" ".join(argv), rc, err.strip()))
        return {}
    for n, line in enumerate(out.splitlines(), 1):
        if len(line) > HELP_WIDTH:
            fail("%s --help: line %d has %d columns, more than %d: %r" %
                 (" ".join(os.path.basename(a) for a in argv), n, len(line), HELP_WIDTH, line))
    opts, last = {}, None
    for line in out.split("options:\n", 1)[-1].splitlines():
        m = HELP_LINE.match(line)
        more = HELP_MORE.match(line)
        if m:
            last = m.group(2)
            opts[last] = (m.group(1) or "", m.group(4))
        elif more and last:
            opts[last] = (opts[last][0], opts[last][1] + " " + more.group(1))
        elif not line.strip():
            break
    return opts


def check_help_matches(argv, rows):
    shown = help_options(argv)
    live = {r["name"]: r for r in rows if r["type"] not in REFUSED}
    name = " ".join(os.path.basename(a) for a in argv)
    for long in sorted(set(shown) - set(live) - {"help", "version"}):
        fail("%s: --%s is parsed (--help) but not in the man page" % (name, long))
    for long in sorted(set(live) - set(shown)):
        fail("%s: --%s is in the man page but not parsed (--help)" % (name, long))
    for long in set(shown) & set(live):
        if shown[long][0] != live[long]["key"]:
            fail("%s: --%s has letter '%s' in --help, '%s' in the man page" %
                 (name, long, shown[long][0], live[long]["key"]))
        d = live[long]["default"]
        if live[long]["type"] not in ("flag", "list") and d != "none" and \
           "(default: %s)" % d not in shown[long][1]:
            fail("%s: --%s: --help does not show the default '%s': %s" %
                 (name, long, d, shown[long][1]))
        if shown[long][1].count("default:") > 1:
            fail("%s: --%s: --help shows two defaults: %s" % (name, long, shown[long][1]))


def probe_value(r):
    if r["choices"]:
        return r["choices"].split("|")[0]
    if re.fullmatch(r"-?[0-9]+", r["default"]):
        return r["default"]
    return "x"


mesh_program = None


def probe_alias(rows, target):
    for r in rows:
        if r["name"] == target and r["type"] not in REFUSED:
            return probe_value(r)
    return "x"


def check_parses(argv, rows):
    name = " ".join(os.path.basename(a) for a in argv)
    for r in rows:
        spellings = ["--" + r["name"]] if r["name"] else []
        spellings += ["-" + r["key"]] if r["key"] else []
        for sp in spellings:
            usage = 2  # rdmakit-mesh's too (issue 35: it was 3)
            if r["type"] == "gone":
                rc, _, err = run(argv + [sp, "x", "--help"])
                if rc != usage or "is now" not in err:
                    fail("%s %s (old spelling): exit %d, %r (wanted exit %d naming the new "
                         "spelling)" % (name, sp, rc, err.strip(), usage))
                continue
            if r["type"] == "foreign":
                rc, _, err = run(argv + [sp, "1", "--help"])
                if rc != usage or sp not in err or "unknown option" in err:
                    fail("%s %s (another program's, refused): exit %d, %r (wanted exit %d "
                         "naming it)" % (name, sp, rc, err.strip(), usage))
                continue
            if r["type"] == "alias":
                target = r["means"].split()[0][2:] if r["means"] else None
                extra = [probe_alias(rows, target)] if r["arg"] else []
                rc, _, err = run(argv + [sp] + extra + ["--help"])
                if rc == 0 and (target or err.strip()):
                    continue
                if target and "option --%s" % target in err:
                    continue
                fail("%s %s %s (another program's spelling of %s): exit %d, %r" %
                     (name, sp, " ".join(extra), r["means"] or "nothing, ignored with a note",
                      rc, err.strip()))
                continue
            extra = [] if r["type"] == "flag" else [probe_value(r)]
            rc, _, err = run(argv + [sp] + extra + ["--help"])
            if rc == 0:
                continue
            if "option --%s" % r["name"] not in err:
                fail("%s %s %s: exit %d, %r (not taken as --%s)" %
                     (name, sp, " ".join(extra), rc, err.strip(), r["name"]))


def source_rows(src, mesh):
    """Option names of the rows written in the sources (src/mesh's when
    rdmakit-mesh is built)."""
    names = set()
    row = re.compile(r'\{"([a-z0-9-]+)",\s*(?:0|\'.\'|\([a-z]+\)),\s*CLI_OPT_(?!GONE)')
    for d in ("src/cli", "src/mesh") if mesh else ("src/cli",):
        for f in os.listdir(os.path.join(src, d)):
            if f.endswith((".c", ".h")):
                names.update(row.findall(open(os.path.join(src, d, f)).read()))
    return names


MAN_WIDTH = 80


def rendered(path):
    env = dict(os.environ, MANWIDTH=str(MAN_WIDTH), MAN_KEEP_FORMATTING="")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    p = subprocess.run(["man", "-l", "-P", "cat", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env, check=False)
    if p.returncode != 0 or p.stderr.strip():
        fail("man -l %s: exit %d: %s" % (path, p.returncode, p.stderr.strip()))
    text = re.sub(r".\x08", "", p.stdout)
    wide = [l for l in text.splitlines() if len(l) > MAN_WIDTH]
    if wide:
        fail("man -l %s: %d lines wider than %d columns, the first: %r" %
             (os.path.basename(path), len(wide), MAN_WIDTH, wide[0]))
    return " ".join(text.split())


def check_page(docs, page, tables):
    path = os.path.join(docs, "man1", page + ".1")
    if not os.path.exists(path):
        fail("no man page %s" % path)
        return
    text = rendered(path)
    for (pg, select, _), rows in tables.items():
        if pg != page:
            continue
        for r in rows:
            spelled = ("-" + r["key"] if r["key"] else "") + \
                      ("/" if r["key"] and r["name"] else "") + \
                      ("--" + r["name"] if r["name"] else "")
            if r["type"] == "gone":
                if "OLD SPELLINGS" not in text or spelled not in text:
                    fail("%s: old spelling %s not under OLD SPELLINGS" % (page, spelled))
                continue
            if r["type"] in ("alias", "foreign"):
                at = text.find("OTHER PROGRAMS' SPELLINGS")
                if at < 0 or spelled not in text[at:] or \
                   (r["means"] and r["means"] not in text[at:]):
                    fail("%s: %s (%s) not under OTHER PROGRAMS' SPELLINGS" %
                         (page, spelled, r["means"] or r["type"]))
                continue
            if r["type"] == "flag":
                if not re.search(re.escape(("-%s, " % r["key"] if r["key"] else "") + "--" +
                                           r["name"]) + r"(?![\w-])", text):
                    fail("%s: flag --%s not shown" % (page, r["name"]))
                continue
            head = ("-%s, " % r["key"] if r["key"] else "") + "--" + r["name"] + \
                   ("" if r["type"] == "flag" else " " + r["arg"])
            found = False
            for m in re.finditer(re.escape(head) + r"(?![\w-])", text):
                tail = text[m.end():m.end() + 3000]
                d = tail.find("Default: ")
                if d >= 0 and tail[d + 9:].startswith(r["default"] + "."):
                    found = True
                    break
            if not found:
                fail("%s%s: '%s' not shown with 'Default: %s.'" %
                     (page, " " + select if select else "", head, r["default"]))
    for std in ("-h, --help", "--version"):
        if std not in text:
            fail("%s: %s not shown" % (page, std))
    if "Default: off." in text:
        fail("%s: a flag is shown with 'Default: off.' (a flag has no default)" % page)


def completion_replies(docs, queries, ib_dir):
    """COMPREPLY for each list of words (the last is the word being completed),
    in one bash that loaded the script."""
    script = os.path.join(docs, "bash-completion", "completions", "rdmakit")
    lines = ["_rdmakit_ib_dir=%s" % ib_dir, ". %s || exit 9" % script]
    for words in queries:
        quoted = " ".join("'%s'" % w.replace("'", "'\\''") for w in words)
        fn = "_rdmakit_mesh" if words[0] == "rdmakit-mesh" else "_rdmakit"
        lines.append("COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); %s; "
                     "echo \"@@ ${COMPREPLY[*]}\"" % (quoted, len(words) - 1, fn))
    p = subprocess.run(["bash", "--norc", "--noprofile"], input="\n".join(lines) + "\n",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       check=False)
    if p.returncode != 0 or p.stderr.strip():
        fail("bash with the completion: exit %d: %s" % (p.returncode, p.stderr.strip()))
    replies = [l[3:].split() for l in p.stdout.splitlines() if l.startswith("@@")]
    if len(replies) != len(queries):
        fail("completion: %d answers to %d queries" % (len(replies), len(queries)))
        return [[] for _ in queries]
    return replies


def table_words(page, select):
    if page == "rdmakit-mesh":
        return ["rdmakit-mesh"]
    words = ["rdmakit", page[len("rdmakit-"):]]
    if select.startswith("--proto="):
        return words + ["--proto", select[len("--proto="):]]
    return words + (select.split() if select else [])


def check_completion(docs, tables, has_mesh):
    with tempfile.TemporaryDirectory() as ib:
        for dev in ("rxe0", "mlx5_1"):
            os.mkdir(os.path.join(ib, dev))
        queries, wants = [], []
        commands = sorted({p[len("rdmakit-"):] for p, _, _ in tables})
        queries.append(["rdmakit", ""])
        wants.append(("every command", set(commands) | {"--help", "--version"}, True))
        for (page, select, _), rows in sorted(tables.items()):
            words = table_words(page, select)
            live = [r for r in rows if r["type"] not in REFUSED]
            longs = {"--" + r["name"] for r in live} | {"--help", "--version"}
            shorts = {"-" + r["key"] for r in live if r["key"]} | {"-h"}
            queries.append(words + ["--"])
            wants.append(("%s: every long option" % " ".join(words), longs, True))
            queries.append(words + ["-"])
            wants.append(("%s: every option" % " ".join(words), longs | shorts, True))
            for r in live:
                if r["choices"]:
                    queries.append(words + ["--" + r["name"], ""])
                    wants.append(("%s --%s: its values" % (" ".join(words), r["name"]),
                                  set(r["choices"].split("|")), True))
                if r["name"] == "device":
                    for sp in ["--device"] + (["-" + r["key"]] if r["key"] else []):
                        queries.append(words + [sp, ""])
                        wants.append(("%s %s: device names" % (" ".join(words), sp),
                                      {"rxe0", "mlx5_1"}, True))
            if page == "rdmakit-mesh" and has_mesh:
                queries.append(["rdmakit", "mesh", "--"])
                wants.append(("rdmakit mesh: every long option", longs, True))
        queries.append(["rdmakit", "blk", ""])
        wants.append(("rdmakit blk: its subcommands",
                      {s for p, s, _ in tables if p == "rdmakit-blk"} | {"--help", "--version"},
                      True))
        queries.append(["rdmakit", "bench", "--op", "=", "wr"])
        wants.append(("rdmakit bench --op=wr", {"write"}, True))
        # values offered where the command checks them itself (issue 35)
        kinds = {"host", "hugepage", "memfd", "memfd-huge", "auto"}
        for words, want in ((["rdmakit", "bench", "--units", ""], {"Gb", "GB", "MiB"}),
                            (["rdmakit", "rc", "--mem", ""], kinds | {"dm"}),
                            (["rdmakit", "bench", "--mem", ""], kinds),
                            (["rdmakit", "memserver", "--mem", ""], kinds)) + \
                ((["rdmakit-mesh", "--stages", ""],
                  {"reach", "latency", "bandwidth", "reach,latency,bandwidth"}),) * has_mesh:
            queries.append(words)
            wants.append((" ".join(words[:-1]) + ": its values", want, True))
        replies = completion_replies(docs, queries, ib)
    for q, (what, want, exact), got in zip(queries, wants, replies):
        if set(got) != want:
            fail("completion of %r (%s): missing %s, extra %s" %
                 (q, what, sorted(want - set(got)), sorted(set(got) - want)))


def check_letters(tables):
    letters, longs = {}, {}
    for (page, select, speaks), rows in tables.items():
        if speaks:
            continue
        where = page + (" " + select if select else "")
        for r in rows:
            if r["type"] == "alias" and r["key"]:
                # another program's letter means the option it is, everywhere
                means = r["means"].split()[0][2:] if r["means"] else "(ignored)"
                letters.setdefault(r["key"], {}).setdefault(means, []).append(where)
                continue
            if r["type"] in REFUSED or not r["key"] or not r["name"]:
                continue
            letters.setdefault(r["key"], {}).setdefault(r["name"], []).append(where)
            longs.setdefault(r["name"], {}).setdefault(r["key"], []).append(where)
    for key, names in sorted(letters.items()):
        if len(names) > 1:
            fail("-%s means %s" % (key, "; ".join("--%s in %s" % (n, ", ".join(w))
                                                  for n, w in sorted(names.items()))))
    for name, keys in sorted(longs.items()):
        if len(keys) > 1:
            fail("--%s has letters %s" % (name, "; ".join("-%s in %s" % (k, ", ".join(w))
                                                         for k, w in sorted(keys.items()))))


def check_versions(rdmakit, mesh, tables):
    rc, out, _ = run([rdmakit, "--version"])
    version = out.strip()
    if rc != 0 or not re.fullmatch(r"rdmakit \d+\.\d+\.\d+", version):
        fail("rdmakit --version: exit %d, %r" % (rc, out))
    for page, select, _ in tables:
        argv = program(rdmakit, mesh, page, select)
        rc, out, err = run(argv + ["--version"])
        want = version.replace("rdmakit", "rdmakit-mesh") if page == "rdmakit-mesh" else version
        if rc != 0 or out.strip() != want:
            fail("%s --version: exit %d, %r %r (wanted %r)" %
                 (" ".join(argv), rc, out.strip(), err.strip(), want))


def check_library(docs, so):
    text = rendered(os.path.join(docs, "man3", "librdmakit.3"))
    rc, out, err = run(["nm", "-D", "--defined-only", so])
    if rc != 0:
        fail("nm %s: %s" % (so, err))
        return
    # Names carry their version node (rk_foo@@RDMAKIT_0.1: src/lib/librdmakit.map).
    funcs = [l.split()[2].split("@")[0] for l in out.splitlines()
             if len(l.split()) == 3 and l.split()[1] == "T" and l.split()[2].startswith("rk_")]
    if len(funcs) < 50:
        fail("librdmakit exports only %d rk_ functions?" % len(funcs))
    for f in funcs:
        if not re.search(r"\b%s\(" % f, text):
            fail("librdmakit(3) does not name %s()" % f)


# ---- the markdown pages ----

README_MAX_LINES = 350
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`+[^`]*`+")


def markdown_files(root):
    files = [f for f in ("README.md", "CONTRIBUTING.md") if os.path.isfile(os.path.join(root, f))]
    for d, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        files += sorted(os.path.relpath(os.path.join(d, n), root) for n in names
                        if n.endswith(".md"))
    return files


def prose_lines(path):
    """(line number, text) of a page's lines outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line.rstrip("\n")


def gh_anchor(title):
    """The anchor GitHub gives a heading: the text as shown (links by their
    text, code without its backticks), lowercased, every character but
    letters, digits, '_', '-' and spaces dropped, spaces turned into '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title.strip())
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for _, line in prose_lines(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        a = gh_anchor(m.group(1))
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else "%s-%d" % (a, n))
    return out


def check_markdown(root):
    """Links to files and sections of every page, and README.md's length."""
    pages = markdown_files(root)
    cache = {}
    for page in pages:
        path = os.path.join(root, page)
        for n, line in prose_lines(path):
            for m in LINK.finditer(CODE_SPAN.sub("code", line)):
                target = m.group(2)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
                    continue
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                    if file_part else path
                where = "%s:%d" % (page, n)
                if not os.path.exists(dest):
                    fail("%s: link to %s: no such file (%s)" %
                         (where, target, os.path.relpath(dest, root)))
                    continue
                if anchor and dest.endswith(".md"):
                    if dest not in cache:
                        cache[dest] = anchors(dest)
                    if anchor not in cache[dest]:
                        fail("%s: link to %s: %s has no section with the anchor '%s' "
                             "(its anchors: %s)" %
                             (where, target, os.path.relpath(dest, root), anchor,
                              ", ".join(sorted(cache[dest])) or "none"))
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        with open(readme, encoding="utf-8") as f:
            count = sum(1 for _ in f)
        if count > README_MAX_LINES:
            fail("README.md: %d lines, more than the %d it may have (move the detail to a "
                 "page in docs/)" % (count, README_MAX_LINES))
    return len(pages)


def check_top_help(argv):
    """rdmakit --help, and a command's own --help where it is not a table's
    (blk, share: their subcommands have the tables), fit HELP_WIDTH."""
    env = dict(os.environ)
    env.pop("RDMAKIT_HELP_WIDTH", None)
    rc, out, err = run(argv + ["--help"], env=env)
    name = " ".join(os.path.basename(a) for a in argv)
    for n, line in enumerate(out.splitlines(), 1):
        if len(line) > HELP_WIDTH:
            fail("%s --help: line %d has %d columns, more than %d: %r" %
                 (name, n, len(line), HELP_WIDTH, line))


def listed_commands(rdmakit):
    env = dict(os.environ, RDMAKIT_HELP_FORMAT="tsv")
    rc, out, err = run([rdmakit, "--help"], env=env)
    if rc != 0:
        fail("%s --help: exit %d: %s" % (rdmakit, rc, err.strip()))
        return []
    return [l.split("\t")[1] for l in out.splitlines() if l.startswith("command\t")]


def section_code_lines(path, title):
    """The lines of the code blocks under '## TITLE' of a page."""
    lines, inside, fenced = [], False, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                if inside and line.strip():
                    lines.append(" ".join(line.split()))
            elif line.startswith("## "):
                inside = line[3:].strip() == title
    return lines


def example_argv(line, rdmakit, mesh):
    """The argv of an EXAMPLES line that runs rdmakit or rdmakit-mesh (sudo,
    mpirun and its options, a trailing comment, '&' or pipe left out), or
    None for another command or a line with a shell substitution."""
    line = re.split(r"\s#\s|\s#$", line)[0].split(" | ")[0].strip().rstrip("&").strip()
    m = re.search(r"(^|\s)(rdmakit(-mesh)?)\s", line + " ")
    if not m or "$(" in line or (m.start(2) > 0 and not re.match(r"(sudo|mpirun)\s", line)):
        return None
    try:
        words = shlex.split(line[m.start(2):])
    except ValueError:
        return None
    if words[0] == "rdmakit-mesh" or words[1:2] == ["mesh"]:
        if not mesh:
            return None
        return [mesh] + words[1 if words[0] == "rdmakit-mesh" else 2:]
    return [rdmakit] + words[1:]


def check_command_pages(root, commands, docs, rdmakit=None, mesh=None):
    """docs/commands/rdmakit-CMD.md for each command, and its EXAMPLES in
    the man page, where the man page is built; with RDMAKIT, every example
    that runs it parses (the line given --help exits 0). Returns how many
    examples ran."""
    ran = 0
    for cmd in commands:
        page = os.path.join(root, "docs", "commands", "rdmakit-%s.md" % cmd)
        if not os.path.isfile(page):
            fail("rdmakit lists the command '%s' but docs/commands/rdmakit-%s.md does not "
                 "exist" % (cmd, cmd))
            continue
        examples = section_code_lines(page, "EXAMPLES")
        if not examples:
            fail("docs/commands/rdmakit-%s.md: no code block under '## EXAMPLES'" % cmd)
        logical, cont = [], ""
        for line in examples:
            if line.endswith("\\"):
                cont += line[:-1]
                continue
            logical.append(cont + line)
            cont = ""
        for line in logical if rdmakit else []:
            argv = example_argv(line, rdmakit, mesh)
            if not argv:
                continue
            rc, _, err = run(argv + ["--help"])
            ran += 1
            if rc != 0:
                fail("docs/commands/rdmakit-%s.md: the example %r does not parse: exit %d, %s" %
                     (cmd, line, rc, err.strip()))
        man = os.path.join(docs, "man1", "rdmakit-%s.1" % cmd)
        if not os.path.isfile(man):
            continue  # rdmakit-mesh without MPI: no page to hold it
        text = rendered(man)
        at = text.find(" EXAMPLES ")
        if at < 0:
            fail("man -l %s: no EXAMPLES section (docs/commands/rdmakit-%s.md has %d "
                 "example lines)" % (man, cmd, len(examples)))
            continue
        for line in examples:
            if line not in text[at:]:
                fail("man -l %s: EXAMPLES lacks the line %r of docs/commands/rdmakit-%s.md" %
                     (man, line, cmd))
    return ran


def self_test():
    """Plant each fault the markdown checks look for, in a tree of their own,
    and check that each is named (and a sound link is not)."""
    global failures, fail_prefix
    fail_prefix = "  named: "
    planted = [
        ("a link to a missing file", "README.md:4: link to docs/gone.md: no such file"),
        ("a link to a missing section",
         "README.md:5: link to docs/topic.md#no-such-section: docs/topic.md has no section "
         "with the anchor 'no-such-section'"),
        ("a link to a missing section of the same page",
         "docs/topic.md:10: link to #elsewhere: docs/topic.md has no section"),
        ("a README of 351 lines", "README.md: 351 lines, more than the 350"),
        ("a command without its page",
         "rdmakit lists the command 'beta' but docs/commands/rdmakit-beta.md does not exist"),
        ("a man page without the page's EXAMPLES", "rdmakit-alpha.1: no EXAMPLES section"),
        ("a man page missing one line of the page's EXAMPLES",
         "rdmakit-gamma.1: EXAMPLES lacks the line 'rdmakit gamma --later'"),
        ("an example that does not parse",
         "docs/commands/rdmakit-alpha.md: the example 'sudo rdmakit alpha --bogus 1 & # planted' "
         "does not parse: exit 2, rdmakit alpha: unknown option --bogus"),
    ]
    ok = 0
    bad = 0

    def expect(what, want, got):
        nonlocal ok, bad
        if want:
            print("ok: %s: %s" % (what, got))
            ok += 1
        else:
            print("FAIL: %s: %s" % (what, got))
            bad += 1

    cases = [("Threat model: what an rkey gives, what `--auth-file` protects",
              "threat-model-what-an-rkey-gives-what---auth-file-protects"),
             ("The notes' workflow, step by step, in the module",
              "the-notes-workflow-step-by-step-in-the-module"),
             ("Remote memory as a block device: rkblk and `rdmakit memserver`",
              "remote-memory-as-a-block-device-rkblk-and-rdmakit-memserver"),
             ("Try it: two commands on a fresh machine", "try-it-two-commands-on-a-fresh-machine")]
    for title, want in cases:
        got = gh_anchor(title)
        expect("anchor of %r" % title, got == want, "got %r, expected %r" % (got, want))

    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs", "commands"))
        os.makedirs(os.path.join(root, "man", "man1"))

        def put(rel, text):
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        readme = ["# planted", "", "Sound: [topic](docs/topic.md#a-real-section-here).",
                  "Missing file: [gone](docs/gone.md).",
                  "Missing section: [topic](docs/topic.md#no-such-section).",
                  "In code, not a link: `[x](docs/gone-too.md)`.", "```",
                  "[also not a link](docs/gone-three.md)", "```"]
        put("README.md", "\n".join(readme + ["line"] * (351 - len(readme))) + "\n")
        put("docs/topic.md", "# Topic\n\n## A real section, here!\n\ntext\n\n## Twice\n\n"
            "## Twice\n[same page](#elsewhere) [second](#twice-1)\n")
        put("docs/commands/rdmakit-alpha.md", "# `rdmakit alpha`\n\nProse.\n\n## EXAMPLES\n\n"
            "```\nrdmakit alpha --now\nsudo rdmakit alpha --bogus 1 & # planted\n"
            "kill $(pidof rdmakit)\n```\n\n## EXIT STATUS\n\n0.\n\n## SEE ALSO\n\n- x(1)\n")
        # A stand-in for rdmakit that refuses --bogus as rdmakit refuses an option.
        fake = os.path.join(root, "rdmakit")
        put("rdmakit", "#!/bin/sh\nfor a; do [ \"$a\" = --bogus ] && "
            "{ echo \"rdmakit $1: unknown option --bogus\" >&2; exit 2; }; done\nexit 0\n")
        os.chmod(fake, 0o755)
        put("man/man1/rdmakit-alpha.1", '.TH RDMAKIT\\-ALPHA 1 "" "planted" "planted"\n'
            ".SH NAME\nrdmakit\\-alpha \\- a page whose EXAMPLE section is missing\n"
            ".SH DESCRIPTION\nProse.\n")
        put("docs/commands/rdmakit-gamma.md", "# gamma\n\n## EXAMPLES\n\n```\nrdmakit gamma\n"
            "rdmakit gamma --later\n```\n")
        put("man/man1/rdmakit-gamma.1", '.TH RDMAKIT\\-GAMMA 1 "" "planted" "planted"\n'
            ".SH NAME\nrdmakit\\-gamma \\- one example line of two\n.SH EXAMPLES\n.nf\n"
            "rdmakit gamma\n.fi\n")
        failures = []
        check_markdown(root)
        check_command_pages(root, ["alpha", "beta", "gamma"], os.path.join(root, "man"), fake)
        got = failures
        failures = []
        for what, want in planted:
            hits = [g for g in got if want in g]
            expect("planted %s" % what, len(hits) == 1,
                   "expected a failure containing %r, got %s" % (want, hits or got))
        named = [g for g in got if not any(w in g for _, w in planted)]
        expect("nothing else named (the sound links, the code spans and blocks)", not named,
               "expected no other failure, got %s" % named)

        # The same tree with every fault removed passes.
        put("README.md", "\n".join(readme[:3]) + "\n")
        put("docs/topic.md", "# Topic\n\n## A real section, here!\n\n## Twice\n\n## Twice\n"
            "[second](#twice-1)\n")
        put("docs/commands/rdmakit-beta.md", "# beta\n\n## EXAMPLES\n\n```\nrdmakit beta\n```\n")
        put("man/man1/rdmakit-alpha.1", '.TH RDMAKIT\\-ALPHA 1 "" "planted" "planted"\n'
            ".SH NAME\nrdmakit\\-alpha \\- a page\n.SH EXAMPLES\n.nf\n"
            "rdmakit alpha \\-\\-now\n.fi\n")
        put("docs/commands/rdmakit-gamma.md", "# gamma\n\n## EXAMPLES\n\n```\nrdmakit gamma\n```\n")
        put("docs/commands/rdmakit-alpha.md", "# alpha\n\n## EXAMPLES\n\n```\n"
            "rdmakit alpha --now\n```\n")
        failures = []
        check_markdown(root)
        check_command_pages(root, ["alpha", "beta", "gamma"], os.path.join(root, "man"), fake)
        expect("the repaired tree passes", not failures,
               "expected no failure, got %s" % failures)
        failures = []
    print("self-test: %d checks passed, %d failed" % (ok, bad))
    sys.exit(1 if bad else 0)


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    import shutil
    for tool, package in (("man", "man-db"), ("groff", "groff-base"), ("bash", "bash"),
                          ("nm", "binutils")):
        if not shutil.which(tool):
            sys.exit("check_docs: no %s: install %s (scripts/deps.sh lists it)" % (tool, package))
    rdmakit, docs, src, so = sys.argv[1:5]
    mesh = sys.argv[5] if len(sys.argv) > 5 else None
    global mesh_program
    mesh_program = mesh
    tables = load_index(docs)
    if not mesh:
        tables = {k: v for k, v in tables.items() if k[0] != "rdmakit-mesh"}
    documented = {r["name"] for rows in tables.values() for r in rows}
    rows_in_sources = source_rows(src, mesh)
    # A pattern gone stale would find no row and check nothing (it looked for
    # RK_OPT_ long after the tables were CLI_OPT_).
    if len(rows_in_sources) < len(documented) // 2:
        fail("the sources' option rows: %d found, against %d documented: is source_rows()'s "
             "pattern stale?" % (len(rows_in_sources), len(documented)))
    for name in sorted(rows_in_sources - documented):
        fail("--%s is a row in the sources but in no man page" % name)
    for (page, select, _), rows in sorted(tables.items()):
        argv = program(rdmakit, mesh, page, select)
        check_help_matches(argv, rows)
        check_parses(argv, rows)
    pages = sorted({p for p, _, _ in tables})
    for page in pages:
        check_page(docs, page, tables)
    rendered(os.path.join(docs, "man1", "rdmakit.1"))
    check_completion(docs, tables, bool(mesh))
    check_letters(tables)
    check_versions(rdmakit, mesh, tables)
    check_library(docs, so)
    check_top_help([rdmakit])
    commands = listed_commands(rdmakit)
    for c in commands:
        check_top_help([rdmakit, c])
    examples = check_command_pages(src, commands, docs, rdmakit, mesh)
    md = check_markdown(src)
    print("%d tables, %d options, %d pages, %d command pages (%d examples run), %d markdown "
          "pages checked: %s" %
          (len(tables), sum(len(v) for v in tables.values()), len(pages) + 2, len(commands),
           examples, md, "%d failures" % len(failures) if failures else "ok"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
