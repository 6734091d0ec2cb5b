"""Every tracked text says what is true now: no review codes, no issue numbers, no test docstring that tells what the
code used to do ("Was: ..."). The history lives in git and CHANGELOG.md; a reader of the code has neither the review
nor the issue at hand."""

from __future__ import annotations

import ast
import re
import subprocess

import pytest

from helpers import ROOT

SKIPPED = {"CHANGELOG.md"}  # the one place that tells what changed
# A review code (see the planted examples below): lowercase "read" and a number with no space between, or in
# brackets, or before a finding's code (a capital and a number); "r" and a number before a finding's code. So "should
# all read 0" and "6 query heads read 2 K/V heads" pass.
REVIEW_CODE = re.compile(r"\bread\d+[a-z]?\b|\(read \d+[a-z]?\)|\bread \d+[a-z]?,? [SMWLA]\d+\b"
                         r"|\br\d+[a-z]? [SMWLA]\d+\b")
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+\b", re.IGNORECASE)
WAS_COMMENT = re.compile(r"#\s*(?:Was\b|was \()")  # a comment that opens on the old behaviour


def tracked_texts() -> dict[str, str]:
    """Each file git tracks or would (not ignored) that is text (UTF-8, no NUL byte), by its path from the root;
    CHANGELOG.md left out."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"not a git checkout: {error}")
    texts = {}
    for name in listed.stdout.decode().split("\0"):
        path = ROOT / name
        if not name or name in SKIPPED or name.startswith(".git/") or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            texts[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return texts


def history(name: str, text: str) -> list[str]:
    """file:line: what, for every review code, issue number and "Was" comment or docstring in one file's text."""
    found = [f"{name}:{n}: {what} {m.group()!r}" for n, line in enumerate(text.splitlines(), 1)
             for what, pattern in (("review code", REVIEW_CODE), ("issue number", ISSUE_NUMBER))
             for m in pattern.finditer(line)]
    if name.endswith(".py"):
        found += [f"{name}:{n}: a comment that starts with Was" for n, line in enumerate(text.splitlines(), 1)
                  if WAS_COMMENT.search(line)]
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return found
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node, clean=True)
                if doc and re.match(r"Was\b", doc):
                    found.append(f"{name}:{node.body[0].lineno}: a docstring that starts with Was")
    return found


def test_no_tracked_text_tells_history():
    texts = tracked_texts()
    assert "tests/unit/test_present_tense.py" in texts and len(texts) > 100, sorted(texts)[:5]
    found = [line for name, text in sorted(texts.items()) for line in history(name, text)]
    assert not found, "\n".join(found)


# The planted examples are split in two, so that this file itself passes the scan above.
@pytest.mark.parametrize("text", ["(read" "6b S2)", "read" "3 found", "read" "14: the title", "(read" " 13)",
                                  "read" " 7 S2", "r" "7 S2", "(issue" " 21)", "Issue" " 19's table",
                                  "issues" " 19 and 11", "issue" " #10"])
def test_a_review_code_or_an_issue_number_is_found(text):
    found = history("planted.md", f"a line\nthe figure {text} here\n")
    kind = "issue number" if "ssue" in text else "review code"
    assert len(found) == 1 and found[0].startswith(f"planted.md:2: {kind} "), found


@pytest.mark.parametrize("text", ["The scores should all read 0: equal scores", "6 query heads read 2 K/V heads",
                                  "Read 8 numbers, then", "all-MiniLM-L6-v2", "rows r0:r1 and columns c0:c1",
                                  "the value it was given", "a known issue, 2 ways round it", "M0,6 L6,0",
                                  "# the weights were rescaled"])
def test_present_tense_words_are_not_history(text):
    assert history("planted.py", f"x = 1  # {text}\n") == []


def test_a_was_docstring_or_comment_is_found():
    source = ('def test_a():\n    """' + 'Was: the title said "Scaled" without a scale."""\n\n\n'
              'def test_b():\n    """Scores are not scaled here: it was given scale=1."""\n'
              '    # ' + 'Was (the old title)\n')
    assert history("tests/unit/test_planted.py", source) == [
        "tests/unit/test_planted.py:7: a comment that starts with Was",
        "tests/unit/test_planted.py:2: a docstring that starts with Was"]
