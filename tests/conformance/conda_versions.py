#!/usr/bin/env python3
"""Writes tests/conformance/version_parse_conda.tsv and version_order_conda.tsv: conda's own
answers (VersionOrder of conda 26.7.1) for the version strings below, one rule of conda's
parser per group. Not run by CI: conda is not part of the project's set-up. It was run as

    git archive 26.7.1 conda | tar -x -C /tmp/conda-26.7.1   # github:conda/conda, tag 26.7.1
    PYTHONPATH=/tmp/conda-26.7.1 /usr/bin/python3 tests/conformance/conda_versions.py tests/conformance

with Debian 12's python3 3.11.2 and python3-packaging (conda's import needs it). Only its
answers are committed. Fields escape TAB, newline and backslash as the shared files do, and
any other character outside printable ASCII as \\uXXXX (read back by unit.test_conformance).
"""
import os
import sys

from conda.exceptions import InvalidVersionSpec
from conda.models.version import VersionOrder

PARSE = [
    # (version, what it shows)
    ("", "empty"), (" ", "only blanks"), ("\t\n", "only blanks"),
    (" 1.0 ", "blanks stripped"), ("1.0\n", "blanks stripped"),
    ("\x1c1.0\x1f", "str.strip() strips U+001C..U+001F"), ("\u00a01.0\u3000", "Unicode blanks stripped"),
    ("1.0\u00851", "a Unicode blank inside"), ("1 0", "a blank inside"),
    ("1.0A", "lower-cased"), ("1.0RC1", "lower-cased"), ("1.0\u212a", "KELVIN SIGN lower-cases to k"),
    ("1.0\u0130", "U+0130 lower-cases to i + U+0307"), ("1.0\u00e9", "non-ASCII letter"),
    ("\u0661", "non-ASCII digit"), ("1.0~rc1", "~"), ("1@2", "@"), ("1,0", ","), ("1/0", "/"),
    ("1:2.0", "a Debian epoch"), ("1=2", "="), ("1$", "$"), ("1#2", "#"), ("1%2", "%"),
    ("1(2)", "parens"), ("1'2", "quote"), ("1\\2", "backslash"), ("1\x7f", "DEL"),
    # '-' becomes '_' only when there is no '_'
    ("1-2", "dash"), ("1-2-3", "dashes"), ("1-2_3", "dash and underscore"),
    ("1_2-3", "underscore and dash"), ("1-", "trailing dash"), ("-1", "leading dash"),
    ("1--2", "two dashes"), ("1.0-rc1", "dash"), ("1+a-b", "dash in local"),
    ("1+a-b_c", "dash and underscore in local"), ("1-2~3", "dash and another bad character"),
    # epoch
    ("!", "only !"), ("!1", "empty epoch"), ("a!1", "letter epoch"), ("1a!1", "mixed epoch"),
    ("1!2!3", "two !"), ("1!", "epoch only"), ("01!1", "leading zero epoch"),
    ("0!1", "zero epoch"), ("1!1.0", "epoch"), ("1+2!3", "+ in epoch"),
    ("1!+2", "epoch, no version"), ("1.0!2", "dotted epoch"), ("*!1", "star epoch"),
    ("1!*", "star after epoch"), ("1!_", "underscore after epoch"),
    # local version
    ("1+2", "local"), ("1+2+3", "two +"), ("0.8+5prealpha+1", "two + (Debian's pocketsphinx)"),
    ("+1", "no version"), ("+", "only +"), ("1+", "empty local"), ("1+.", "empty local parts"),
    ("1+a.", "trailing . in local"), ("1+a_", "trailing _ in local"), ("1+_a", "leading _ in local"),
    ("1+a..b", "empty local part"), ("1+a__b", "empty local part"), ("1+A", "local lower-cased"),
    ("1+a_b", "_ in local"), ("1+*", "star local"), ("1+1!2", "! after +"),
    ("1.0+dfsg", "Debian +dfsg"), ("1.0+dfsg-1", "Debian +dfsg-N"),
    ("1.0+dfsg-1+deb12u1", "Debian security update"), ("1.0+ds1-2+b1", "Debian binNMU"),
    # components
    (".", "only ."), ("_", "only _"), ("__", "two _"), ("*", "star"), ("**", "two stars"),
    ("1.*", "star component"), ("1*2", "star inside"), ("1..2", "empty component"),
    (".1", "leading ."), ("1.", "trailing ."), ("_1", "leading _"), ("1_", "trailing _"),
    ("1__", "trailing __"), ("1___", "trailing ___"), ("1._", "._ at the end"),
    ("1.__", ".__ at the end"), ("1_.", "_. at the end"), ("1._1", "._ inside"),
    ("1.0_", "openssl-like"), ("1.0a_", "openssl-like after a letter"), ("1.0.1_a", "_ then a"),
    ("dev", "dev"), ("post", "post"), ("1.post1", "post"), ("1.dev_", "dev_"),
    ("00001.0002", "leading zeros"), ("1" * 40, "a long number"), ("a", "a letter"),
    ("v1.2", "v prefix"), ("1.2.3.4.5.6.7.8.9.10", "many components"),
    ("3.9.2-1", "Debian revision"), ("2.10.3-2", "Debian revision"),
    ("1.13.1+dfsg-4", "Debian torch"), ("0.8+5prealpha+1-16", "Debian pocketsphinx with revision"),
    ("5prealpha+1", "two +, no dot"),
]

ORDER = [
    ("1.0\u212a", "1.0k"), ("1.0K", "1.0k"), (" 1.0 ", "1.0"), ("\u00a01.0", "1.0"),
    ("1-", "1_"), ("1-", "1"), ("1_", "1.0a"), ("1_", "1a"), ("1._", "1_"), ("1__", "1_"),
    ("1!1", "2"), ("01!1", "1!1"), ("1+a-b", "1+a_b"), ("1+a-b", "1+a.b"),
    ("1.0+dfsg_1", "1.0"), ("1.0+dfsg_1", "1.0+dfsg"), ("_", "0"), ("_", "a"), ("*", "_"),
    ("1.0.1_a", "1.0.1a"), ("1.dev_", "1.dev"), ("0.8+5prealpha.1", "0.8+5prealpha_1"),
    ("0.8+5prealpha.1", "0.8"), ("0.8.5prealpha1", "0.8"),
]


def esc(s):
    out = []
    for ch in s:
        if ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\\":
            out.append("\\\\")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append("\\u%04x" % ord(ch))
    return "".join(out)


def main():
    outdir = sys.argv[1]
    with open(os.path.join(outdir, "version_parse_conda.tsv"), "w") as f:
        f.write("version\tvalidity\tconda_normalized\tconda_reason\tnote\n")
        for v, note in PARSE:
            try:
                norm, valid, why = str(VersionOrder(v)), "valid", ""
            except InvalidVersionSpec as e:
                norm, valid = "", "ERROR"
                why = str(e).split(": ", 1)[1] if ": " in str(e) else str(e)
            f.write("\t".join(esc(x) for x in (v, valid, norm, why, note)) + "\n")
    with open(os.path.join(outdir, "version_order_conda.tsv"), "w") as f:
        f.write("a\top\tb\tsource\tnote\n")
        for a, b in ORDER:
            va, vb = VersionOrder(a), VersionOrder(b)
            op = "<" if va < vb else ">" if vb < va else "="
            f.write("\t".join(esc(x) for x in (a, op, b, "conda 26.7.1", "")) + "\n")


if __name__ == "__main__":
    main()
