#!/usr/bin/env python3
"""Checks the layer rules of ARCHITECTURE.md: a file in layer L may include karman headers
of L itself and of the layers listed for L below, nothing else.  Prints every violation
(file:line, the include, the layer rule) and exits 1 if there is one.
usage: check_layers.py SOURCE_DIR"""
import os
import re
import sys

# layer -> layers it may include (besides itself); the order is bottom-up
ALLOWED = {
    "core": [],
    "physics": ["core"],
    "config": ["core", "physics"],
    "mesh": ["core", "config"],
    "geometry": ["core", "mesh"],
    "io": ["core", "physics", "mesh"],
    "discretization": ["core", "physics", "config", "mesh", "geometry"],
    "solver": ["core", "physics", "config", "mesh", "geometry", "discretization"],
    "design": ["core", "config", "mesh", "geometry"],
    "adjoint": ["core", "physics", "config", "mesh", "geometry", "discretization", "solver", "io"],
    "driver": ["core", "physics", "config", "mesh", "geometry", "discretization", "solver", "io",
               "design", "adjoint"],
    "optimization": ["core", "physics", "config", "mesh", "geometry", "discretization", "solver",
                     "io", "design", "adjoint", "driver"],
    "cli": ["core", "physics", "config", "mesh", "geometry", "discretization", "solver", "io",
            "design", "adjoint", "driver", "optimization"],
    # the Python module (python/bindings.cpp): a client of the library like the CLI, not of it
    "python": ["core", "physics", "config", "mesh", "geometry", "discretization", "solver", "io",
               "design", "adjoint", "driver", "optimization"],
}


def layer_of(rel):
    parts = rel.split(os.sep)
    if parts[0] == "include" and len(parts) > 3 and parts[1] == "karman":
        return parts[2]
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "python":
        return "python"
    return None


def main():
    root = sys.argv[1]
    violations, files = [], 0
    for top in ("include", "src", "python"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".hpp", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                layer = layer_of(rel)
                if layer not in ALLOWED:
                    violations.append(f"{rel}: folder is not a known layer ({', '.join(ALLOWED)})")
                    continue
                files += 1
                with open(path, encoding="utf-8") as f:
                    for lineno, line in enumerate(f, 1):
                        m = re.match(r'\s*#\s*include\s+"karman/([a-z_]+)/', line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target != layer and target not in ALLOWED[layer]:
                            violations.append(
                                f"{rel}:{lineno}: layer '{layer}' includes '{target}' "
                                f"(allowed: {', '.join(ALLOWED[layer]) or 'none'})")
    for v in violations:
        print(v)
    print(f"check_layers: {files} files, {len(violations)} violation(s)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
