#!/usr/bin/env python3
"""Generates src/zone/table.rs (the time zones) and src/zone/windows.rs (Windows ids).

Run with the oracle venv's Python, which has the pinned packages (scripts/oracle-tools):

    scripts/oracle-tools && target/oracle-venv/bin/python scripts/tzdata.py

Sources, pinned in tests/oracles/requirements.txt:
- PyPI `tzdata`: the IANA database compiled to TZif files. The zones are the names in its
  `zones` file (what zoneinfo.available_timezones() lists). Each TZif file is read here, not
  through zoneinfo, so that the oracle test (tests/oracles/zones.py, which uses zoneinfo)
  judges an independent reading.
- PyPI `tzlocal`: its windows_tz.py is generated from CLDR's windowsZones.xml; `win_tz` is the
  territory "001" mapping from Windows ids to IANA names.

What is kept per zone: the TZif footer (the POSIX TZ rule for times after the last explicit
transition) and the explicit offset changes from 2020-01-01T00:00Z on. Earlier history is
dropped: src/zone computes due times near now, and answers instants before 2020 with the offset
in force at 2020-01-01T00:00Z. Zones and links with the same footer and changes share one entry.
"""
import datetime
import os
import struct
import subprocess
import sys

# This script's own name would shadow the package: look for it elsewhere than beside the script.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import tzdata  # noqa: E402

EPOCH = 1_577_836_800  # 2020-01-01T00:00:00Z
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZONEINFO = os.path.join(os.path.dirname(tzdata.__file__), "zoneinfo")


def iana_version():
    with open(os.path.join(ZONEINFO, "tzdata.zi")) as f:
        first = f.readline().split()
    assert first[:2] == ["#", "version"], first
    assert first[2] == tzdata.IANA_VERSION, (first, tzdata.IANA_VERSION)
    return first[2]


def zone_names():
    with open(os.path.join(os.path.dirname(tzdata.__file__), "zones")) as f:
        return sorted(line.strip() for line in f if line.strip())


def read_tzif(name):
    """The v2+ data block of a TZif file (RFC 8536): transitions, their UTC offsets, type 0's
    offset and the footer."""
    with open(os.path.join(ZONEINFO, name), "rb") as f:
        data = f.read()
    assert data[:4] == b"TZif" and data[4] in b"234", f"{name}: not TZif v2+"

    def header(at):
        assert data[at:at + 4] == b"TZif", name
        return struct.unpack(">6l", data[at + 20:at + 44])

    isut, isstd, leap, timecnt, typecnt, charcnt = header(0)
    at = 44 + timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut
    isut, isstd, leap, timecnt, typecnt, charcnt = header(at)
    at += 44
    times = struct.unpack(f">{timecnt}q", data[at:at + 8 * timecnt])
    at += 8 * timecnt
    indices = data[at:at + timecnt]
    at += timecnt
    types = [struct.unpack(">lBB", data[at + 6 * i:at + 6 * i + 6]) for i in range(typecnt)]
    at += 6 * typecnt + charcnt + leap * 12 + isstd + isut
    assert data[at:at + 1] == b"\n" and data.endswith(b"\n"), f"{name}: no footer"
    footer = data[at + 1:-1].decode("ascii")
    assert footer and "\n" not in footer, f"{name}: empty footer"
    return times, [types[i][0] for i in indices], types[0][0], footer


def history(name):
    """(offset at 2020-01-01, [(instant, new offset)]) of the explicit changes from 2020 on."""
    times, offsets, first_offset, _ = read_tzif(name)
    k = next((i for i, t in enumerate(times) if t >= EPOCH), len(times))
    initial = offsets[k - 1] if k else first_offset
    changes, previous = [], initial
    for t, offset in zip(times[k:], offsets[k:]):
        if offset != previous:
            changes.append((t, offset))
            previous = offset
    # The footer rules only after the last explicit transition, even one that keeps the offset
    # (America/Nuuk, 2023-10-29T01:00Z: -02 summer time became -02 standard time): kept as a marker.
    if k < len(times) and (not changes or changes[-1][0] != times[-1]):
        changes.append((times[-1], previous))
    for t, offset in changes:
        assert 0 <= t < 2**32, f"{name}: {t} does not fit the table's u32"
        assert abs(offset) < 26 * 3600, f"{name}: offset {offset}"
    return (initial, tuple(changes)) if changes else (0, ())


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def windows_ids():
    from tzlocal.windows_tz import win_tz
    import importlib.metadata
    version = importlib.metadata.version("tzlocal")
    for windows, iana in win_tz.items():
        assert not set("=*\n") & set(windows), windows
        assert windows.count("Standard Time") <= 1, windows
        assert os.path.isfile(os.path.join(ZONEINFO, iana)), f"{windows}: {iana} not in tzdata"
    return version, sorted(win_tz.items())


def table(version, names):
    rules, histories, entries = [], [(0, ())], {}
    for name in names:
        footer = read_tzif(name)[3]
        if footer not in rules:
            rules.append(footer)
        h = history(name)
        if h not in histories:
            histories.append(h)
        entries.setdefault((rules.index(footer), histories.index(h)), []).append(name)
    changes = sum(len(h[1]) for h in histories)
    name_bytes = sum(len(" ".join(group)) for group in entries.values())
    out = [
        f"//! GENERATED by scripts/tzdata.py from the IANA time zone database {version} (PyPI tzdata",
        f"//! {tzdata.__version__}); do not edit. To regenerate, change the pins in",
        "//! tests/oracles/requirements.txt, then run",
        "//! `scripts/oracle-tools && target/oracle-venv/bin/python scripts/tzdata.py`.",
        "//! Data, hence longer than the 300-line rule.",
        "//!",
        f"//! {len(names)} names in {len(entries)} entries (names with the same footer and changes share",
        f"//! one), {len(rules)} footers, {changes} explicit changes from 2020 on; on wasm32 about",
        f"//! {name_bytes + 16 * len(entries) + 24 * len(rules) + 12 * len(histories) + 8 * changes}"
        " bytes of data.",
        "",
        "use super::posix::Rule;",
        "use super::{Entry, History};",
        "",
        "/// The IANA release the table was generated from.",
        f'pub const TZDATA_VERSION: &str = "{version}";',
        "",
        "/// The TZif footers, each once: the rule after a zone's last explicit change.",
        f"pub(super) static RULES: [Rule; {len(rules)}] = [",
    ]
    out += [f'    Rule::table("{footer}"),' for footer in rules]
    out += [
        "];",
        "",
        "/// Explicit changes from 2020 on, before the footer takes over: (instant, new offset).",
        "/// The last one is where the footer starts, which may keep the offset.",
        f"pub(super) static HISTORIES: [History; {len(histories)}] = [",
    ]
    for initial, items in histories:
        if not items:
            out.append("    History { initial: 0, changes: &[] },")
            continue
        out.append(f"    History {{\n        initial: {initial},\n        changes: &[")
        out += [f"            ({t}, {offset}), // {iso(t)}" for t, offset in items]
        out.append("        ],\n    },")
    out += [
        "];",
        "",
        "/// The names (space-separated) of each entry, its footer and its history.",
        f"pub(super) static ENTRIES: [Entry; {len(entries)}] = [",
    ]
    for (rule, hist), group in entries.items():
        out.append(f'    Entry {{ names: "{" ".join(group)}", rule: &RULES[{rule}], '
                   f"history: &HISTORIES[{hist}] }},")
    out.append("];")
    sizes = {"names": name_bytes, "footers": len(rules), "changes": changes,
             "entries": len(entries), "histories": len(histories)}
    return "\n".join(out) + "\n", sizes


def windows_table(tzlocal_version, pairs):
    out = [
        f"//! GENERATED by scripts/tzdata.py from PyPI tzlocal {tzlocal_version} (its windows_tz.py,",
        "//! itself generated from CLDR's windowsZones.xml): do not edit. The Windows time zone ids",
        "//! of territory \"001\" and the IANA zone each stands for; Azure Functions' WEBSITE_TIME_ZONE",
        "//! takes these ids. Regenerate with the table: see src/zone/table.rs.",
        "",
        f"/// `Windows id=IANA name` lines, {len(pairs)} of them, sorted by Windows id; `*` stands for",
        "/// \"Standard Time\", which nearly every id has.",
        'pub(super) static WINDOWS: &str = "\\',
    ]
    out += [f"{windows.replace('Standard Time', '*')}={iana}" for windows, iana in pairs]
    out[-1] += '";'
    return "\n".join(out) + "\n"


def main():
    version = iana_version()
    names = zone_names()
    source, sizes = table(version, names)
    tzlocal_version, pairs = windows_ids()
    paths = {
        os.path.join(ROOT, "src/zone/table.rs"): source,
        os.path.join(ROOT, "src/zone/windows.rs"): windows_table(tzlocal_version, pairs),
    }
    for path, text in paths.items():
        with open(path, "w") as f:
            f.write(text)
    # The committed files are as cargo fmt leaves them, so regenerating changes only data.
    subprocess.run(["rustfmt", "--edition", "2021", *paths], cwd=ROOT, check=True)
    print(f"tzdata {version}: {len(names)} names, {sizes}; {len(pairs)} Windows ids "
          f"(tzlocal {tzlocal_version})", file=sys.stderr)


if __name__ == "__main__":
    main()
