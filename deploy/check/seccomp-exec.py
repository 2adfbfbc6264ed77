#!/usr/bin/python3
"""Runs a command under the system-call filter a systemd unit declares, as systemd would load it.

usage: seccomp-exec.py UNIT_FILE [--kill [--errno-for NAME]...] -- COMMAND [ARG...]

The unit's `SystemCallFilter=` lines are applied in order, the way systemd(1) reads them: the first
line decides the mode (an allow-list unless it starts with `~`), later lines add names (plain) or
remove them (`~`). Groups (`@system-service`, `@resources`, ...) are expanded with
`systemd-analyze syscall-filter`, nested groups included. A call outside the list fails with the
unit's `SystemCallErrorNumber=` (e.g. EPERM); with none, or with `--kill`, it kills the process
with SIGSYS as systemd does. `--kill` thus shows whether the command makes any call outside the
list at all, but for the calls named by `--errno-for`, which still fail with the unit's error
number (the ones the command is known to survive being refused). Needs python3-seccomp (Debian's libseccomp binding); sets no_new_privs as
`NoNewPrivileges=yes` does.
"""
import errno
import os
import subprocess
import sys

import seccomp


def group_members(name, cache):
    """The syscall names of one systemd group, nested groups expanded."""
    if name in cache:
        return cache[name]
    output = subprocess.run(["systemd-analyze", "syscall-filter", name],
                            check=True, capture_output=True, text=True).stdout
    members = set()
    for line in output.splitlines()[1:]:
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith("@"):
            members |= group_members(entry, cache)
        else:
            members.add(entry)
    cache[name] = members
    return members


def unit_settings(path):
    """The unit's SystemCallFilter= values, in order, and its SystemCallErrorNumber= (or None)."""
    filters, error_number = [], None
    for raw in open(path, encoding="utf-8"):
        line = raw.strip()
        if line.startswith("SystemCallFilter="):
            filters.append(line.split("=", 1)[1].strip())
        elif line.startswith("SystemCallErrorNumber="):
            error_number = line.split("=", 1)[1].strip()
    return filters, error_number


def allowed_calls(filters):
    cache = {}
    allowed, allow_list = set(), None
    for value in filters:
        invert = value.startswith("~")
        names = set()
        for token in value.lstrip("~").split():
            names |= group_members(token, cache) if token.startswith("@") else {token}
        if allow_list is None:
            allow_list = not invert
            if not allow_list:
                sys.exit("seccomp-exec: a deny-list first filter is not supported by this check")
        allowed = allowed - names if invert else allowed | names
    return allowed


def main():
    arguments = sys.argv[1:]
    if "--" not in arguments or not arguments:
        sys.exit(__doc__)
    split = arguments.index("--")
    options, command = arguments[:split], arguments[split + 1:]
    unit, kill = options[0], "--kill" in options[1:]
    refused = [options[i + 1] for i, option in enumerate(options[:-1]) if option == "--errno-for"]
    filters, error_number = unit_settings(unit)
    if not filters:
        sys.exit(f"seccomp-exec: {unit} has no SystemCallFilter=")
    if kill or error_number is None:
        default = seccomp.KILL_PROCESS
    else:
        default = seccomp.ERRNO(getattr(errno, error_number))
    rules = seccomp.SyscallFilter(defaction=default)
    added = 0
    for name in sorted(allowed_calls(filters)):
        try:
            rules.add_rule(seccomp.ALLOW, name)
            added += 1
        except (RuntimeError, ValueError):
            pass  # not a call on this architecture (setuid32 on x86-64...): systemd skips it too
    sys.stderr.write(f"seccomp-exec: {added} calls allowed, others "
                     f"{'kill' if default == seccomp.KILL_PROCESS else error_number}\n")
    for name in refused:
        rules.add_rule(seccomp.ERRNO(getattr(errno, error_number or "EPERM")), name)
    rules.load()
    os.execvp(command[0], command)


main()
