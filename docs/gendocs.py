#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Write rdmakit's man pages and bash completion from the option tables.

The tables that drive parsing and --help (struct cli_opt, src/cli/cli_opts.h) are
read from the built programs themselves: with RDMAKIT_HELP_FORMAT=tsv in the
environment, `rdmakit --help` lists the commands (and the option tables of
the commands that have several), and `rdmakit CMD --help` prints its table
as records instead of text (cli_opts.c, cli_opts_help_epilog()). Nothing here
lists an option by hand, so the pages and the completion cannot drift from
what the programs parse. librdmakit(3) is generated from the public headers
(include/rdmakit/*.h): each header's leading comment, and every rk_*
function's declaration with the comment above it.

Each command's prose, docs/commands/rdmakit-CMD.md, is merged into its page
(--pages DIR): the text before the first capitalised section goes into
DESCRIPTION, after the table's own description, and its sections EXAMPLES,
EXIT STATUS and SEE ALSO become the page's (see "The markdown a command page
may use" below; anything else is refused, naming the file and line).

usage: gendocs.py --rdmakit BIN [--mesh BIN] --include DIR --version V --out DIR
                  [--pages DIR]

Writes OUT/man1/rdmakit.1, OUT/man1/rdmakit-CMD.1 (rdmakit-mesh.1 with
--mesh), OUT/man3/librdmakit.3, OUT/bash-completion/completions/rdmakit (and
rdmakit-mesh, the same script) and OUT/options.tsv (every option of every table, for the tests).
"""
import argparse
import os
import re
import subprocess
import sys

SEE_ALSO_LOG = ("RDMAKIT_LOG=error|warn|info|debug sets how much the library logs "
                "(the default: warn).")


def unescape(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(text[i + 1], text[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


# The columns the preformatted text (usage, description, notes) may take:
# man(1) indents it by 8 and renders within 80 (MANWIDTH=80).
PRE_WIDTH = 72


def run_tsv(argv):
    env = dict(os.environ, RDMAKIT_HELP_FORMAT="tsv", RDMAKIT_HELP_WIDTH=str(PRE_WIDTH))
    # Keep MPI launchers' rank variables away: rdmakit-mesh prints help on rank 0 only.
    for v in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        env.pop(v, None)
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, check=False)
    if p.returncode != 0:
        sys.exit("gendocs: %s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr))
    return [line.split("\t") for line in p.stdout.splitlines() if line]


class Table:
    """One option table: usage, description, epilog and its rows."""

    def __init__(self, records, words, speaks=""):
        self.words = words      # argv after the program that selects it
        self.speaks = speaks    # the program whose letters it speaks ("" rdmakit's)
        self.usage = self.description = self.epilog = ""
        self.options, self.gone, self.others = [], [], []
        for r in records:
            if r[0] in ("usage", "description", "epilog"):
                setattr(self, r[0], unescape(r[1]))
            elif r[0] == "option":
                o = dict(zip(("name", "key", "type", "arg", "default", "choices", "help",
                              "means"), [unescape(x) for x in r[1:9]]))
                o["choices"] = o["choices"].split("|") if o["choices"] else []
                o.setdefault("means", "")
                if o["type"] == "gone":
                    self.gone.append(o)
                elif o["type"] in ("alias", "foreign"):
                    self.others.append(o)
                else:
                    self.options.append(o)
            else:
                sys.exit("gendocs: unknown record %r" % r[0])


def shown_default(o):
    """The default as the man page shows it: every option that takes a value
    has one; a flag none ("")."""
    if o["default"]:
        return o["default"]
    if o["type"] in ("flag", "alias", "foreign"):
        return ""
    if o["type"] == "list":
        return "none (repeat the option for more than one)"
    return "none"


# ---- roff ----

def roff_text(text):
    """Plain text as roff: backslashes and hyphens escaped, no line starting
    with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def roff_pre(text):
    """Preformatted text, as --help prints it."""
    return ".nf\n" + roff_text(text) + "\n.fi"


# ---- docs/commands/rdmakit-CMD.md as roff ----
#
# The markdown a command page may use, so that it reads the same on GitHub
# and in man(1):
#   - "# Title" on the first line: the page's title on GitHub; the man page
#     takes its NAME from the program instead;
#   - "## EXAMPLES", "## EXIT STATUS", "## SEE ALSO": the man page's sections
#     of those names (each required, in any order); any other "##" or "###"
#     heading is a subsection (.SS) of the section it is in, DESCRIPTION for
#     the text before the first capitalised section;
#   - paragraphs (lines up to a blank line, joined and filled by roff);
#   - fenced code blocks (``` at the start of a line, an info string
#     allowed): shown as written, indented, not filled;
#   - bullet lists: "- " at the start of a line, continued by lines indented
#     two spaces (no nesting, no code block inside an item);
#   - inline: `code` and **strong** in bold, *emphasis* in italics,
#     [text](target) as its text, and in SEE ALSO name(N) as a page
#     reference (name in bold).
# Tables, images, quotes, numbered or nested lists, indented code and HTML
# are refused: they have no faithful man-page form here. Every text is
# escaped for roff: backslashes, hyphens (\-, so options copy as typed) and
# a leading dot or quote.

MD_SECTIONS = ("EXAMPLES", "EXIT STATUS", "SEE ALSO")
INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])|"
                    r"\[([^\]]+)\]\(([^)\s]+)\)")
PAGE_REF = re.compile(r"\b([A-Za-z_][\w.+-]*)\((\d[a-z]*)\)")


class MarkdownError(Exception):
    pass


def md_inline(text, refs=False):
    """A paragraph's text as roff, inline markup turned into font changes."""
    def plain(t):
        t = roff_text(t)
        if refs:
            t = PAGE_REF.sub(lambda m: "\\fB%s\\fR(%s)" % (m.group(1), m.group(2)), t)
        return t
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(plain(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("\\fB%s\\fR" % roff_text(m.group(1)))
        elif m.group(2) is not None:
            out.append("\\fB%s\\fR" % md_inline(m.group(2), refs))
        elif m.group(3) is not None:
            out.append("\\fI%s\\fR" % md_inline(m.group(3), refs))
        else:
            out.append(md_inline(m.group(4), refs))
        pos = m.end()
    out.append(plain(text[pos:]))
    return "".join(out)


CODE_WIDTH = PRE_WIDTH - 4


def code_lines(lines):
    """A code block's lines, each longer than the page has room for (an
    indent of 4 inside the section's) wrapped at spaces, the rest under its
    start indented by 4 more."""
    out = []
    for line in lines:
        lead = len(line) - len(line.lstrip(" "))
        while len(line) > CODE_WIDTH:
            cut = line.rfind(" ", lead + 1, CODE_WIDTH + 1)
            if cut <= lead:
                break
            out.append(line[:cut].rstrip())
            line = " " * (lead + 4) + line[cut:].lstrip()
        out.append(line)
    return out


def md_line(text):
    """One filled line: no control character at its start."""
    return "\\&" + text if text.startswith((".", "'")) else text


def md_heading_arg(text):
    return '"%s"' % md_inline(text).replace('"', "\\(dq")


def md_to_roff(path):
    """{"DESCRIPTION": [roff lines], "EXAMPLES": [...], ...} of one page."""
    lines = open(path, encoding="utf-8").read().split("\n")
    where = lambda i: "%s:%d" % (path, i + 1)
    if not lines or not lines[0].startswith("# "):
        raise MarkdownError("%s: the first line is not the page's '# Title'" % where(0))
    sections = {"DESCRIPTION": []}
    cur = sections["DESCRIPTION"]
    i = 1
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                raise MarkdownError("%s: a code block that never ends" % where(i))
            cur += [".PP", ".RS 4", ".nf"] + [md_line(roff_text(l))
                                              for l in code_lines(lines[i + 1:j])] \
                + [".fi", ".RE"]
            i = j + 1
            continue
        m = re.match(r"(#{2,3}) (.+)$", line)
        if m:
            title = m.group(2).strip()
            if m.group(1) == "##" and title.upper() == title and re.search(r"[A-Z]", title):
                if title not in MD_SECTIONS:
                    raise MarkdownError("%s: '## %s' is none of the sections %s" %
                                        (where(i), title, ", ".join(MD_SECTIONS)))
                if title in sections:
                    raise MarkdownError("%s: a second '## %s'" % (where(i), title))
                cur = sections[title] = []
            else:
                cur += [".SS " + md_heading_arg(title)]
            i += 1
            continue
        if line.startswith("- "):
            while i < len(lines) and lines[i].startswith("- "):
                item = [lines[i][2:]]
                i += 1
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                    if lines[i].lstrip().startswith(("```", "- ")):
                        raise MarkdownError("%s: a code block or a list inside a list item"
                                            % where(i))
                    item.append(lines[i].strip())
                    i += 1
                refs = cur is sections.get("SEE ALSO")
                cur += [".IP \\(bu 2", md_line(md_inline(" ".join(item), refs))]
                if i < len(lines) and not lines[i].strip() and i + 1 < len(lines) and \
                   lines[i + 1].startswith("- "):
                    i += 1
            continue
        if re.match(r"(\||>|!\[|\d+\. |    |\t|<|#)", line):
            raise MarkdownError("%s: not in the markdown a command page may use "
                                "(docs/gendocs.py): %r" % (where(i), line[:60]))
        para = []
        while i < len(lines) and lines[i].strip() and not lines[i].startswith(("```", "- ",
                                                                                  "#")):
            para.append(lines[i].strip())
            i += 1
        refs = cur is sections.get("SEE ALSO")
        cur += [".PP", md_line(md_inline(" ".join(para), refs))]
    missing = [s for s in MD_SECTIONS if s not in sections]
    if missing:
        raise MarkdownError("%s: no section %s" % (path, ", ".join("'## %s'" % s
                                                                   for s in missing)))
    return sections


def command_prose(pages_dir, name):
    """The roff of docs/commands/NAME.md, or None when there is none."""
    if not pages_dir:
        return None
    path = os.path.join(pages_dir, name + ".md")
    if not os.path.exists(path):
        print("gendocs: warning: no %s: %s(1) has no prose (docs_check fails on it)" %
              (path, name), file=sys.stderr)
        return None
    try:
        return md_to_roff(path)
    except MarkdownError as e:
        sys.exit("gendocs: %s" % e)


def option_head(o):
    parts = []
    if o["key"]:
        parts.append("\\fB\\-%s\\fR" % o["key"])
    if o["name"]:
        parts.append("\\fB\\-\\-%s\\fR" % roff_text(o["name"]))
    head = ", ".join(parts)
    if o["type"] != "flag":
        head += " \\fI%s\\fR" % roff_text(o["arg"])
    return head


def option_item(o):
    lines = [".TP", option_head(o), roff_text(o["help"]) + "."]
    if o["choices"]:
        lines += [".br", "Values: " + roff_text(", ".join(o["choices"])) + "."]
    if shown_default(o):
        lines += [".br", "Default: " + roff_text(shown_default(o)) + "."]
    return "\n".join(lines)


STANDARD = [
    {"name": "help", "key": "h", "type": "flag", "arg": "", "default": "", "choices": [],
     "help": "show the options and their defaults, then exit"},
    {"name": "version", "key": "", "type": "flag", "arg": "", "default": "", "choices": [],
     "help": "print rdmakit's version, then exit"},
]


def options_section(title, table):
    out = [".SH " + title]
    if table.speaks:
        out.append("These options are %s's own, letters included." % roff_text(table.speaks))
    out += [option_item(o) for o in table.options + STANDARD]
    return out


def spellings(tables, rows):
    """(spelled, row) for the rows (t.gone or t.others) of the tables, each
    spelling once: "-x", "--name" or "-x/--name"."""
    seen = set()
    for t in tables:
        for o in getattr(t, rows):
            spelled = ("-" + o["key"] if o["key"] else "") + \
                      (("/" if o["key"] else "") + "--" + o["name"] if o["name"] else "")
            if spelled not in seen:
                seen.add(spelled)
                yield spelled, o


def others_section(tables, usage_status):
    """Other programs' spellings: each taken as rdmakit's option, taken and
    ignored, or refused naming rdmakit's way."""
    out = []
    for spelled, o in spellings(tables, "others"):
        head = "\\fB%s\\fR" % roff_text(spelled)
        if o["arg"]:
            head += " \\fI%s\\fR" % roff_text(o["arg"])
        if o["type"] == "alias" and o["means"]:
            text = "%s: the same as %s." % (o["help"], o["means"])
        elif o["type"] == "alias":
            text = o["help"] + "."  # taken and ignored, as it says
        else:
            text = "refused (exit status %d): %s." % (usage_status, o["help"])
        out += [".TP", head, roff_text(text)]
    if out:
        out = [".SH OTHER PROGRAMS' SPELLINGS",
               "Spellings of the programs this command stands in for, so that their "
               "command lines meet an answer: taken as the option named, or refused "
               "naming rdmakit's way. \\-\\-help does not list them."] + out
    return out


def gone_section(tables, usage_status):
    out = []
    for spelled, o in spellings(tables, "gone"):
        out += [".TP", "\\fB%s\\fR" % roff_text(spelled), roff_text(o["help"]) + "."]
    if out:
        out = [".SH OLD SPELLINGS",
               "Given, these fail (exit status %d, bad usage) with the message below, naming "
               "the new spelling." % usage_status] + out
    return out


def page_head(name, section, summary, version):
    return ['.\\" Generated by docs/gendocs.py from the option tables; do not edit.',
            '.TH %s %d "" "rdmakit %s" "rdmakit manual"' % (name.upper().replace("-", "\\-"),
                                                             section, version),
            ".nh", ".ad l", ".SH NAME", "%s \\- %s" % (roff_text(name), roff_text(summary))]


def see_also(name, prose=None):
    pages = ["rdmakit(1)", "librdmakit(3)"]
    ours = ", ".join("\\fB%s\\fR(%s)" % (p.split("(")[0].replace("-", "\\-"),
                                          p.split("(")[1][:-1])
                     for p in pages if not p.startswith(name + "("))
    out = [".SH ENVIRONMENT", roff_text(SEE_ALSO_LOG)]
    if prose:
        return out + [".SH EXAMPLES"] + prose["EXAMPLES"] + \
            [".SH SEE ALSO", ours + "."] + prose["SEE ALSO"]
    return out + [".SH SEE ALSO", ours]


def exit_status(prose):
    return [".SH EXIT STATUS"] + prose["EXIT STATUS"] if prose else []


def command_page(name, summary, tables, version, prose=None):
    out = page_head(name, 1, summary, version)
    first = tables[0]
    usage = first.usage
    out += [".SH SYNOPSIS", roff_pre(usage)]
    more = prose["DESCRIPTION"] if prose else []
    if len(tables) == 1:
        out += [".SH DESCRIPTION", roff_pre(first.description)] + more
        out += options_section("OPTIONS", first) + exit_status(prose)
        if first.epilog:
            out += [".SH NOTES", roff_pre(first.epilog)]
    else:
        shared_description = len({t.description for t in tables}) == 1
        if shared_description:
            out += [".SH DESCRIPTION", roff_pre(first.description)] + more
        elif more:
            out += [".SH DESCRIPTION"] + more
        for t in tables:
            words = " ".join(t.words)
            if not shared_description:
                out += [".SH %s" % roff_text(words.upper()), roff_pre(t.description)]
            out += options_section("OPTIONS: " + roff_text(words), t)
        out += exit_status(prose)
        epilogs = []
        for t in tables:
            if t.epilog and t.epilog not in epilogs:
                epilogs.append(t.epilog)
        if epilogs:
            out += [".SH NOTES", roff_pre("\n\n".join(epilogs))]
    out += others_section(tables, 2)
    out += gone_section(tables, 2)
    out += see_also(name, prose)
    return "\n".join(out) + "\n"


def main_page(description, commands, version, mesh):
    out = page_head("rdmakit", 1, description.rstrip("."), version)
    out += [".SH SYNOPSIS", ".nf", "\\fBrdmakit\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
            "\\fBrdmakit\\fR \\fICOMMAND\\fR \\-\\-help",
            "\\fBrdmakit help\\fR \\fICOMMAND\\fR [\\fIWORDS\\fR]", "\\fBrdmakit\\fR \\-\\-version",
            ".fi", ".SH DESCRIPTION", roff_text(description),
            "Each command has its own page, \\fBrdmakit\\-\\fR\\fICOMMAND\\fR(1), and "
            "\\fBrdmakit \\fR\\fICOMMAND\\fR \\fB\\-\\-help\\fR lists its options with "
            "their defaults.", ".PP",
            "Option letters mean one thing across the commands: \\-t is \\-\\-timeout "
            "(seconds; \\fBrdmakit bench\\fR refuses \\-t, perftest's \\-\\-tx\\-depth), "
            "\\-I \\-\\-interval (seconds, fractions allowed), \\-n "
            "\\-\\-count, \\-s \\-\\-size, \\-p \\-\\-port, \\-j "
            "\\-\\-json and so on; the exceptions are the tables of \\fBrdmakit ping "
            "\\-\\-proto rping\\fR and \\fB\\-\\-proto pingpong\\fR, which take the letters "
            "of the programs they speak for.", ".SH COMMANDS"]
    for name, summary, _ in commands:
        page = "rdmakit\\-" + roff_text(name)
        ref = "\\fB%s\\fR(1)" % page if name != "mesh" or mesh else "(built with MPI only)"
        out += [".TP", "\\fB%s\\fR" % roff_text(name), "%s; see %s." % (roff_text(summary), ref)]
    out += [".SH OPTIONS", ".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR",
            "list the commands, then exit.", ".TP", "\\fB\\-\\-version\\fR",
            "print rdmakit's version, then exit.",
            ".SH EXIT STATUS",
            "0 the run worked; 1 the run failed; 2 bad usage; 3 a threshold was missed or "
            "could not be graded (bench, ping). rdmakit\\-mesh(1) has its own.",
            ".SH FILES", ".TP", "\\fI/sys/class/infiniband\\fR",
            "the RDMA devices (\\-d \\fIDEV\\fR; the completion offers their names).",
            ".SH ENVIRONMENT", roff_text(SEE_ALSO_LOG), ".SH SEE ALSO",
            ", ".join("\\fBrdmakit\\-%s\\fR(1)" % roff_text(n) for n, _, _ in commands
                      if n != "mesh" or mesh) + ", \\fBlibrdmakit\\fR(3)"]
    return "\n".join(out) + "\n"


# ---- librdmakit(3) from the headers ----

COMMENT = re.compile(r"/\*(.*?)\*/", re.S)


def comment_text(c):
    lines = [re.sub(r"^\s*\* ?", "", l).rstrip() for l in c.strip("*").split("\n")]
    return " ".join(l.strip() for l in lines if l.strip())


def header_api(path):
    """(summary, [(declaration, comment)]) of one public header."""
    text = open(path).read()
    m = COMMENT.match(text.lstrip())
    summary = comment_text(m.group(1)) if m else ""
    summary = re.sub(r"^rdmakit:\s*", "", summary)
    funcs = []
    # Top-level declarations of rk_ functions, with the comment just above.
    for m in re.finditer(r"(?:/\*((?:(?!\*/).)*?)\*/\s*\n)?"
                         r"^((?:[A-Za-z_][\w \*]*?[\s\*])(rk_\w+)\s*\([^;{]*?\)\s*;)",
                         text, re.S | re.M):
        decl = " ".join(m.group(2).split())
        funcs.append((decl, comment_text(m.group(1)) if m.group(1) else ""))
    return summary, funcs


def header_order(include_dir):
    names = sorted(f for f in os.listdir(include_dir) if f.endswith(".h"))
    umbrella = os.path.join(include_dir, "rdmakit.h")
    order = []
    if os.path.exists(umbrella):
        order = re.findall(r"#include <rdmakit/(\w+\.h)>", open(umbrella).read())
    return [n for n in order if n in names] + [n for n in names
                                                if n not in order and n != "rdmakit.h"]


def library_page(include_dir, version):
    out = page_head("librdmakit", 3, "RDMA toolkit library over libibverbs and librdmacm",
                    version)
    out += [".SH SYNOPSIS", ".nf", "\\fB#include <rdmakit/rdmakit.h>\\fR", "",
            "cc ... $(pkg\\-config \\-\\-cflags \\-\\-libs rdmakit)", ".fi",
            ".SH DESCRIPTION",
            ".PP", "librdmakit is the library under the \\fBrdmakit\\fR(1) command: devices, "
            "GIDs, memory, CQs, QPs and their operations, connection set-up over a TCP "
            "exchange or RDMA CM, and the engines of the commands (bench, ping, rc, ud, "
            "share, loopback, qp\\-states, mesh) behind one call each that fills a "
            "result struct.", ".PP",
            "Conventions: functions return 0 or a negative errno; outputs (the \\fI_p\\fR "
            "parameters) are set only on success; an error is logged once, by the "
            "function that first understands it (\\fBRDMAKIT_LOG\\fR sets how much is "
            "logged); \\fBrk_strerror\\fR() names an error.", ".PP",
            "This page is generated from the public headers, "
            "\\fI/usr/include/rdmakit/*.h\\fR: each header's purpose, then its functions "
            "with the comment that documents them. The headers themselves hold the "
            "structures and constants.", ".SH API"]
    for h in header_order(include_dir):
        summary, funcs = header_api(os.path.join(include_dir, h))
        out += [".SS <rdmakit/%s>" % roff_text(h), roff_text(summary)]
        for decl, comment in funcs:
            out += [".TP", ".B " + roff_text(decl).replace('"', '\\(dq'),
                    roff_text(comment) if comment else "(see the header)"]
    out += [".SH SEE ALSO", "\\fBrdmakit\\fR(1), \\fBibv_open_device\\fR(3), "
            "\\fBrdma_cm\\fR(7)"]
    return "\n".join(out) + "\n"


# ---- bash completion ----

def sh_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def completion(commands, tables_by_key, mesh_key):
    """A bash completion for rdmakit and rdmakit-mesh: commands, each table's
    options, the values of options with choices, device names for --device,
    files for FILE, PATH and DIR arguments."""
    out = ["# bash completion for rdmakit and rdmakit-mesh.",
           "# Generated by docs/gendocs.py from the option tables; do not edit.",
           "",
           "_rdmakit_commands=%s" % sh_quote(" ".join(c[0] for c in commands)),
           "declare -gA _rdmakit_subs=(%s)" % " ".join(
               "[%s]=%s" % (c[0], sh_quote(" ".join(w for w in c[2])))
               for c in commands if c[2] and not c[2][0].startswith("-")),
           "declare -gA _rdmakit_opts=()", "declare -gA _rdmakit_takes=()",
           "declare -gA _rdmakit_values=()", ""]
    for key, t in tables_by_key.items():
        opts, takes = [], []
        for o in t.options + STANDARD:
            spelled = ["--" + o["name"]] + (["-" + o["key"]] if o["key"] else [])
            opts += spelled
            if o["type"] != "flag":
                takes += spelled
                if o["choices"]:
                    kind = "choices:" + " ".join(o["choices"])
                elif o["name"] == "device":
                    kind = "device"
                elif o["arg"] in ("FILE", "PATH") or o["arg"].endswith(".json"):
                    kind = "file"
                elif o["arg"] == "DIR":
                    kind = "dir"
                else:
                    kind = ""
                for s in spelled:
                    out.append("_rdmakit_values[%s]=%s" % (sh_quote(key + " " + s),
                                                           sh_quote(kind)))
        out.append("_rdmakit_opts[%s]=%s" % (sh_quote(key), sh_quote(" ".join(opts))))
        out.append("_rdmakit_takes[%s]=%s" % (sh_quote(key), sh_quote(" " + " ".join(takes)
                                                                        + " ")))
    out.append(r'''
# Where the RDMA devices are listed (a variable so a test can point it elsewhere).
_rdmakit_ib_dir=${_rdmakit_ib_dir:-/sys/class/infiniband}

# _rdmakit_complete KEY: COMPREPLY for the current word in table KEY, the
# words before it being COMP_WORDS[start..].
_rdmakit_complete() {
	local key=$1 cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local kind d devs=()
	# "--opt=value": bash splits at "=" (COMP_WORDBREAKS).
	if [ "$cur" = "=" ]; then
		prev=${COMP_WORDS[COMP_CWORD-1]}
		cur=
	elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then
		prev=${COMP_WORDS[COMP_CWORD-2]}
	fi
	if [[ ${_rdmakit_takes[$key]} == *" $prev "* ]]; then
		kind=${_rdmakit_values["$key $prev"]}
		case $kind in
		choices:*) COMPREPLY=($(compgen -W "${kind#choices:}" -- "$cur")) ;;
		device)
			for d in "$_rdmakit_ib_dir"/*; do
				[ -e "$d" ] && devs+=("${d##*/}")
			done
			COMPREPLY=($(compgen -W "${devs[*]}" -- "$cur")) ;;
		file) COMPREPLY=($(compgen -f -- "$cur")) ;;
		dir) COMPREPLY=($(compgen -d -- "$cur")) ;;
		*) COMPREPLY=() ;;
		esac
		return 0
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${_rdmakit_opts[$key]}" -- "$cur"))
	fi
	return 0
}

_rdmakit() {
	local cmd=${COMP_WORDS[1]} key proto=native i
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$_rdmakit_commands --help --version" -- "${COMP_WORDS[1]}"))
		return 0
	fi
	key=$cmd
	if [ -n "${_rdmakit_subs[$cmd]}" ]; then
		if [ "$COMP_CWORD" -eq 2 ]; then
			COMPREPLY=($(compgen -W "${_rdmakit_subs[$cmd]} --help --version" -- \
				"${COMP_WORDS[2]}"))
			return 0
		fi
		key="$cmd ${COMP_WORDS[2]}"
	fi
	if [ "$cmd" = ping ]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = --proto ]; then
				proto=${COMP_WORDS[i+1]}
				[ "$proto" = "=" ] && proto=${COMP_WORDS[i+2]}
			fi
		done
		key="ping --proto=$proto"
		# --proto's own value being typed, or one it does not take
		[ -n "${_rdmakit_opts[$key]}" ] || key="ping --proto=native"
	fi
	[ -n "${_rdmakit_opts[$key]}" ] || return 0
	_rdmakit_complete "$key"
}
complete -F _rdmakit rdmakit
''')
    if mesh_key:
        out.append('''_rdmakit_mesh() {
	COMPREPLY=()
	_rdmakit_complete %s
}
complete -F _rdmakit_mesh rdmakit-mesh''' % sh_quote(mesh_key))
    return "\n".join(out) + "\n"


def index_rows(page, t):
    # One row for the table itself, so that a table without options is listed.
    yield "\t".join([page, " ".join(t.words), t.speaks, "", "", "table", "", "", "", ""])
    for o in t.options + t.gone + t.others:
        yield "\t".join([page, " ".join(t.words), t.speaks, o["name"], o["key"], o["type"],
                         o["arg"], shown_default(o), "|".join(o["choices"]), o["means"]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rdmakit", required=True)
    ap.add_argument("--mesh")
    ap.add_argument("--include", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--pages", help="docs/commands: rdmakit-CMD.md per command")
    a = ap.parse_args()

    top = run_tsv([a.rdmakit, "--help"])
    description = next(r[1] for r in top if r[0] == "description")
    commands = []  # (name, summary, [(words, speaks)])
    for r in top:
        if r[0] == "command":
            commands.append((r[1], r[2], []))
        elif r[0] == "variant":
            commands[-1][2].append((r[2], r[3] if len(r) > 3 else ""))
    tables_by_key, pages, index = {}, {}, []
    for name, summary, variants in commands:
        tables = []
        if name == "mesh":
            if not a.mesh:
                continue
            tables = [Table(run_tsv([a.mesh, "--help"]), [])]
            tables_by_key["mesh"] = tables[0]
        elif not variants:
            tables = [Table(run_tsv([a.rdmakit, name, "--help"]), [])]
            tables_by_key[name] = tables[0]
        else:
            for words, speaks in variants:
                t = Table(run_tsv([a.rdmakit, name, words, "--help"]), [words], speaks)
                tables.append(t)
                tables_by_key[name + " " + words] = t
        pages["man1/rdmakit-%s.1" % name] = command_page(
            "rdmakit-" + name, summary, tables, a.version,
            command_prose(a.pages, "rdmakit-" + name))
        index += [row for t in tables for row in index_rows("rdmakit-" + name, t)]
    # The command list keeps only the subcommand words (blk), not --proto.
    commands = [(n, s, [w for w, _ in v]) for n, s, v in commands]
    pages["man1/rdmakit.1"] = main_page(description, commands, a.version, bool(a.mesh))
    pages["man3/librdmakit.3"] = library_page(a.include, a.version)
    # As bash-completion looks for them: DIR/bash-completion/completions/NAME.
    script = completion(commands, tables_by_key, "mesh" if a.mesh else None)
    pages["bash-completion/completions/rdmakit"] = script
    if a.mesh:
        pages["bash-completion/completions/rdmakit-mesh"] = script
    pages["options.tsv"] = ("page\tselect\tspeaks\tname\tkey\ttype\targ\tdefault\tchoices\t"
                            "means\n" +
                            "\n".join(index) + "\n")
    # A page of a command gone (or of rdmakit-mesh, built no more) goes too.
    for d, ext in (("man1", ".1"), ("man3", ".3"), ("bash-completion/completions", "")):
        path = os.path.join(a.out, d)
        for f in os.listdir(path) if os.path.isdir(path) else []:
            if f.endswith(ext) and d + "/" + f not in pages:
                os.remove(os.path.join(path, f))
    for rel, text in pages.items():
        path = os.path.join(a.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
