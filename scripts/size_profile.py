#!/usr/bin/env python3
"""Where the component's bytes go: ranks the core module's functions and data by size.

Reads a component built with names kept (`cargo build --profile size --target wasm32-wasip2`),
walks to each embedded core module, and sizes every function body against the `name` section.
Prints the top functions, a per-crate sum and the data segments. Standard library only, so it
runs wherever Python 3 does; no twiggy or wasm-tools install needed.
"""
import re
import sys
from collections import defaultdict


def leb(buf, pos):
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, pos


def name_str(buf, pos):
    n, pos = leb(buf, pos)
    return buf[pos:pos + n].decode("utf-8", "replace"), pos + n


def sections(buf, start, end):
    pos = start
    while pos < end:
        sid = buf[pos]
        size, body = leb(buf, pos + 1)
        yield sid, body, body + size
        pos = body + size


def core_modules(buf):
    """Core modules inside a component (section id 1), recursing into nested components (4)."""
    version_layer = buf[4:8]
    if version_layer[2:4] == b"\x00\x00":  # a core module itself
        yield buf
        return
    for sid, start, end in sections(buf, 8, len(buf)):
        if sid == 1:
            yield buf[start:end]
        elif sid == 4:
            yield from core_modules(buf[start:end])


def profile(module):
    imported_funcs = 0
    bodies, names, data = [], {}, []
    for sid, start, end in sections(module, 8, len(module)):
        if sid == 2:  # imports: function imports shift the function index space
            count, pos = leb(module, start)
            for _ in range(count):
                _, pos = name_str(module, pos)
                _, pos = name_str(module, pos)
                kind = module[pos]
                pos += 1
                if kind == 0:
                    imported_funcs += 1
                    _, pos = leb(module, pos)
                elif kind == 1:
                    pos += 1
                    flags, pos = leb(module, pos)
                    _, pos = leb(module, pos)
                    if flags & 1:
                        _, pos = leb(module, pos)
                elif kind == 2:
                    flags, pos = leb(module, pos)
                    _, pos = leb(module, pos)
                    if flags & 1:
                        _, pos = leb(module, pos)
                else:
                    pos += 2
        elif sid == 10:
            count, pos = leb(module, start)
            for i in range(count):
                size, body = leb(module, pos)
                bodies.append((imported_funcs + i, body - pos + size))
                pos = body + size
        elif sid == 11:
            count, pos = leb(module, start)
            for i in range(count):
                flags, pos = leb(module, pos)
                if flags in (0, 2):
                    if flags == 2:
                        _, pos = leb(module, pos)
                    while module[pos] != 0x0B:
                        pos += 1
                    pos += 1
                size, pos = leb(module, pos)
                data.append((i, size))
                pos += size
        elif sid == 0:
            title, pos = name_str(module, start)
            if title != "name":
                continue
            while pos < end:
                sub, pos = module[pos], pos + 1
                size, pos = leb(module, pos)
                sub_end = pos + size
                if sub == 1:
                    count, p = leb(module, pos)
                    for _ in range(count):
                        idx, p = leb(module, p)
                        names[idx], p = name_str(module, p)
                pos = sub_end
    return bodies, names, data


def crate_of(name):
    """The crate a symbol belongs to: the first path segment, for legacy (`_ZN`, demangled
    below) and v0 (`_R`) manglings alike; export shims and C symbols keep their own names."""
    if name.startswith("_R"):
        m = re.search(r"C(?:s[0-9A-Za-z_]*_)?(\d+)", name)
        if m:
            start = m.end()
            return name[start:start + int(m.group(1))]
    m = re.match(r"[_<]*([A-Za-z_][A-Za-z0-9_]*)(::|$)", name)
    return m.group(1) if m and m.group(2) else name.split("#")[0]


def demangle(name):
    if not name.startswith("_ZN"):
        return name
    parts, pos = [], 3
    while pos < len(name) and name[pos].isdigit():
        m = re.match(r"\d+", name[pos:])
        n = int(m.group(0))
        pos += len(m.group(0))
        parts.append(name[pos:pos + n])
        pos += n
    if parts and re.fullmatch(r"h[0-9a-f]{16}", parts[-1]):
        parts.pop()
    text = "::".join(parts)
    for code, ch in (("$LT$", "<"), ("$GT$", ">"), ("$u20$", " "), ("$C$", ","),
                     ("$RF$", "&"), ("$BP$", "*"), ("$u7b$", "{"), ("$u7d$", "}"),
                     ("..", "::")):
        text = text.replace(code, ch)
    return text


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "target/wasm32-wasip2/size/traffic_cop.wasm"
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    buf = open(path, "rb").read()
    print(f"{path}: {len(buf)} bytes")
    for module in core_modules(buf):
        bodies, names, data = profile(module)
        code = sum(size for _, size in bodies)
        print(f"core module {len(module)} bytes: code {code} bytes in {len(bodies)} functions, "
              f"data {sum(s for _, s in data)} bytes in {len(data)} segments")
        if not names or code < 4096:
            continue
        by_crate = defaultdict(int)
        for idx, size in bodies:
            by_crate[crate_of(demangle(names.get(idx, "?")))] += size
        print("  by crate (approximate: generic code counts where it is instantiated):")
        for crate, size in sorted(by_crate.items(), key=lambda kv: -kv[1])[:15]:
            print(f"    {size:8d}  {crate}")
        print(f"  top {top} functions:")
        for idx, size in sorted(bodies, key=lambda b: -b[1])[:top]:
            print(f"    {size:8d}  {demangle(names.get(idx, f'func[{idx}]'))[:150]}")


if __name__ == "__main__":
    main()
