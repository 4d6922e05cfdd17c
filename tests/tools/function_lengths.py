#!/usr/bin/env python3
"""Lists the functions of src/ (and python/) whose body is longer than LIMIT lines (issue 41:
functions sized so that each holds one concept), longest first: body lines, file:line of the
opening brace, name.  A heuristic, not a parser: comments, string literals and preprocessor
lines are blanked, then a '{' that follows ")" (with const/noexcept/override, a trailing
return type or a constructor's initializer list) opens a function when no function encloses
it; lambdas and blocks inside a function count as the function's lines.
usage: function_lengths.py [SOURCE_DIR [LIMIT]]   (defaults: . and 100)"""
import pathlib
import re
import sys

SIGNATURE = re.compile(r"([\w:~<>]+)\s*\([^;{}]*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*"
                       r"(->\s*[\w:<> ,*&]+)?\s*(:[^;{}]*)?$", re.S)
NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof"}


def blank(text):
    """text with comments, string/char literals and preprocessor lines blanked (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('R"', i):
            delim = re.match(r'R"([^(]*)\(', text[i:]).group(1)
            j = text.find(")" + delim + '"', i) + len(delim) + 2
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] != text[i]:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    lines = "".join(out).split("\n")
    return "\n".join("" if line.lstrip().startswith("#") else line for line in lines)


def functions(path):
    """(body lines, opening line, name) of each outermost function defined in path."""
    text = blank(path.read_text(encoding="utf-8"))
    stack, found, line, last = [], [], 1, 0  # stack: (name or None, line of its '{')
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            m = SIGNATURE.search(text[last:i])
            inside = any(name for name, _ in stack)
            is_function = (m and not inside and m.group(1).split("::")[-1] not in NOT_FUNCTIONS)
            stack.append((m.group(1) if is_function else None, line))
            last = i + 1
        elif c == "}":
            if stack:
                name, start = stack.pop()
                if name:
                    found.append((line - start - 1, start, name))
            last = i + 1
        elif c == ";":
            last = i + 1
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rows = []
    for path in sorted(root.glob("src/**/*.cpp")) + sorted(root.glob("python/**/*.cpp")):
        for length, start, name in functions(path):
            if length > limit:
                rows.append((length, f"{path.relative_to(root)}:{start}", name))
    for length, where, name in sorted(rows, reverse=True):
        print(f"{length:5d}  {where}  {name}")


if __name__ == "__main__":
    main()
