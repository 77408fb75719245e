#!/usr/bin/env python3
"""Writes vqsim's man pages from its --help text, so that the pages cannot drift from it.

usage: man_pages.py VQSIM OUTDIR

vqsim.1 comes from `vqsim --help`, and one page per command listed there (vqsim-run.1, ...)
from `vqsim CMD --help`; a command whose usage names sub-commands (`vqsim bench tandem
[options]`) gets their --help in its page too. The help texts follow a few conventions that
this relies on: a `usage:` block first, paragraphs separated by blank lines, example and list
lines indented, headings ending in a colon ("Examples:", "Exit status: ..."), and the options
as Boost.Program_options prints them ("  --set arg   override ...", continuations indented).
"""

import re
import subprocess
import sys
from pathlib import Path


def run_help(vqsim, *args):
    done = subprocess.run([vqsim, *args, "--help"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"man_pages.py: `vqsim {' '.join(args)} --help` exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def esc(text):
    """Roff-safe text: backslashes and hyphens escaped (\\- is the ASCII minus, so copied
    options work), no line starting with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n"))


def blocks(text):
    """Paragraphs: runs of non-blank lines."""
    out, cur = [], []
    for line in text.rstrip("\n").split("\n"):
        if line.strip():
            cur.append(line.rstrip())
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def prose(lines):
    """A paragraph: flush-left lines filled, indented lines (examples, lists) kept as they are."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith(" "):
            j = i
            while j < len(lines) and lines[j].startswith(" "):
                j += 1
            body = "\n".join(line[2:] if line.startswith("  ") else line for line in lines[i:j])
            out.append(".RS 4\n.nf\n" + esc(body) + "\n.fi\n.RE")
            i = j
        else:
            j = i
            while j < len(lines) and not lines[j].startswith(" "):
                j += 1
            out.append(".PP\n" + esc(" ".join(line.strip() for line in lines[i:j])))
            i = j
    return "\n".join(out)


BOOST_OPTION = re.compile(r"^ {1,4}((?:-\w \[ )?--[\w-]+(?: \])?)((?: arg)?(?: \(=[^)]*\))?)(?:\s+(.*))?$")
PLAIN_OPTION = re.compile(r"^ {1,4}(-\S.*?)(?:\s{2,}(.*))?$")


def term(option, arg):
    names = re.findall(r"--?[\w-]+", option)
    t = ", ".join("\\fB" + esc(n) + "\\fR" for n in names)
    arg = arg.strip()
    if arg.startswith("arg"):
        t += " \\fIarg\\fR"
        arg = arg[3:].strip()
    if arg:
        t += " " + esc(arg)
    return t


def options(lines):
    """An options block as .TP items."""
    items = []
    for line in lines:
        m = BOOST_OPTION.match(line) or PLAIN_OPTION.match(line)
        if m:
            if m.re is BOOST_OPTION:
                items.append([term(m.group(1), m.group(2)), m.group(3) or ""])
            else:
                items.append([term(m.group(1), ""), m.group(2) or ""])
        elif items:
            items[-1][1] += " " + line.strip()
    return "\n".join(f".TP\n{t}\n{esc(d.strip())}" for t, d in items)


HEADING = re.compile(r"^([A-Za-z][A-Za-z ]*):(?:\s+(.*))?$")


def page_sections(text, command=None):
    """The help text as [(SECTION, roff)], in order; sections of one name are merged."""
    sections = {}

    def add(name, roff):
        if roff:
            sections.setdefault(name, []).append(roff)

    for i, lines in enumerate(blocks(text)):
        first = lines[0]
        m = HEADING.match(first)
        head = m.group(1).lower() if m else ""
        if i == 0 and not first.startswith("usage:") and command is None and " — " in first:
            continue  # vqsim.1's first line, "vqsim VERSION — what it is": the NAME line
        if head == "usage":
            body = [first[len("usage:"):].strip()] + [l.strip() for l in lines[1:]]
            add("SYNOPSIS", ".nf\n" + esc("\n".join(body)) + "\n.fi")
        elif head == "options" and not m.group(2):
            add("OPTIONS", options(lines[1:]))
        elif head in ("examples", "example"):
            body = ([m.group(2)] if m.group(2) else []) + [l.strip() for l in lines[1:]]
            add("EXAMPLES", ".RS 4\n.nf\n" + esc("\n".join(body)) + "\n.fi\n.RE")
        elif head == "exit status":
            add("EXIT STATUS", ".PP\n" + esc(" ".join([m.group(2) or ""] + [l.strip() for l in lines[1:]]).strip()))
        elif head == "commands" and not m.group(2):
            items = []
            for line in lines[1:]:
                name, _, summary = line.strip().partition(" ")
                items.append(f".TP\n\\fBvqsim {esc(name)}\\fR (\\fBvqsim\\-{esc(name)}\\fR(1))\n{esc(summary.strip())}")
            add("COMMANDS", "\n".join(items))
        else:
            add("DESCRIPTION", prose(lines))
    return sections


ORDER = ["SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXAMPLES", "EXIT STATUS"]


def render(title, name_line, sections, extra):
    out = [f'.TH {title.upper()} 1 "" "vqsim {VERSION}" "User Commands"', ".SH NAME", esc(name_line)]
    for s in ORDER:
        if s in sections:
            out += [f".SH {s}"] + sections[s]
    out += extra
    return "\n".join(out) + "\n"


FILES = """.SH FILES
.TP
\\fI../share/vqsim/scenarios/\\fR (next to the directory of the \\fBvqsim\\fR binary)
The example scenarios and sweep specs. Wherever a command takes a scenario file, the name of
one of these without \\fI.toml\\fR will do: \\fBvqsim run default\\fR runs
\\fIscenarios/default.toml\\fR, and \\fBvqsim sweep sweeps/blk\\-vs\\-scsi \\-\\-out out\\fR the spec
\\fIscenarios/sweeps/blk\\-vs\\-scsi.toml\\fR. A file of that name in the current directory
comes first; a name that is neither is refused with the list of names.
.TP
\\fI../share/doc/vqsim/\\fR
README.md and docs/: the scenario keys, the models, calibration, sweeps, accuracy.
"""


def main():
    global VERSION
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    vqsim, outdir = sys.argv[1], Path(sys.argv[2])
    outdir.mkdir(parents=True, exist_ok=True)
    top = run_help(vqsim)
    first = top.split("\n", 1)[0]
    m = re.match(r"vqsim (\S+) — (.*)", first)
    if not m:
        sys.exit(f"man_pages.py: unexpected first line of vqsim --help: {first!r}")
    VERSION = m.group(1)
    sections = page_sections(top)
    commands = re.findall(r"^\.TP\n\\fBvqsim (\S+)\\fR", "\n".join(sections.get("COMMANDS", [])), re.M)
    commands = [c.replace("\\-", "-") for c in commands]
    if not commands:
        sys.exit("man_pages.py: no commands found in vqsim --help")
    see_also = ", ".join(f"\\fBvqsim\\-{esc(c)}\\fR(1)" for c in commands)
    pages = {"vqsim.1": render("vqsim", "vqsim - " + m.group(2), sections, [FILES, ".SH SEE ALSO", see_also])}
    summaries = dict(re.findall(r"^  (\S+)\s+(.*)$", top.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0], re.M))
    for c in commands:
        text = run_help(vqsim, c)
        sections = page_sections(text, command=c)
        extra = []
        # Sub-commands named in the usage block ("vqsim bench tandem [options]"): their help too.
        usage = text.split("\n\n", 1)[0]
        for sub in re.findall(rf"vqsim {re.escape(c)} ([a-z][a-z0-9-]*) \[options\]", usage):
            extra.append(f'.SH "VQSIM {c.upper()} {sub.upper()}"')
            sub_sections = page_sections(run_help(vqsim, c, sub), command=f"{c} {sub}")
            for s in ORDER:
                if s in sub_sections:
                    if s != "DESCRIPTION":
                        extra.append(f".SS {s.title()}")
                    extra += sub_sections[s]
        extra += [".SH SEE ALSO", "\\fBvqsim\\fR(1)"]
        pages[f"vqsim-{c}.1"] = render(f"vqsim-{c}", f"vqsim-{c} - {summaries.get(c, '')}", sections, extra)
    for name, roff in pages.items():
        path = outdir / name
        if not path.exists() or path.read_text() != roff:  # unchanged pages keep their time stamps
            path.write_text(roff)
    for stale in outdir.glob("vqsim*.1"):
        if stale.name not in pages:
            stale.unlink()


VERSION = ""
if __name__ == "__main__":
    main()
