#!/usr/bin/env python3
"""Keeps a long-lived cargo target directory (CI's cache) from filling the disk: of each test
binary and each incremental compilation folder, only the newest build is kept; the older
ones are what earlier commits built and nothing runs them again. One stop's shared target
grew to 66 GB this way, 50 of them such leftovers, until every command on the machine failed.

Usage: prune-target.py TARGET_DIR   (prints what it freed)
"""
import collections
import os
import re
import shutil
import sys


def size_of(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def newest_only(folder, pattern, keep):
    """Removes all but the newest entry of `folder` per name `pattern` groups; bytes freed."""
    if not os.path.isdir(folder):
        return 0
    groups = collections.defaultdict(list)
    for entry in os.listdir(folder):
        match = re.fullmatch(pattern, entry)
        path = os.path.join(folder, entry)
        if match and keep(path):
            groups[match.group(1)].append(path)
    freed = 0
    for paths in groups.values():
        paths.sort(key=os.path.getmtime, reverse=True)
        for old in paths[1:]:
            freed += size_of(old)
            if os.path.isdir(old):
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.remove(old)
                if os.path.exists(old + ".d"):
                    os.remove(old + ".d")
    return freed


def main():
    target = sys.argv[1]
    freed = 0
    for profile in ("debug", "release"):
        deps = os.path.join(target, profile, "deps")
        executable = lambda p: os.path.isfile(p) and os.access(p, os.X_OK)
        freed += newest_only(deps, r"(.+)-[0-9a-f]{16}", executable)
        freed += newest_only(os.path.join(target, profile, "incremental"), r"(.+)-[0-9a-z]+", os.path.isdir)
    print(f"pruned {freed / 1e9:.1f} GB of earlier builds from {target}")


if __name__ == "__main__":
    main()
