#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/check-layers.py [ROOT] - do the #include lines of src/ and tools/
keep the layer order that docs/architecture.md states?

The order is read from the table under "## Where things are" in
ROOT/docs/architecture.md (default: the checkout this script is in): a row
per folder, its first cell the folder (`src/base/`), its last the folders it
may use (`base, proto`, or "nothing" / "the public API").  So the map a
newcomer reads is the rule the build enforces, and the two cannot drift.

Every quoted include of a file under src/ must be
  - a public header, "ctrack/NAME.h" (include/ctrack/), or
  - "FOLDER/NAME.h" where FOLDER is the file's own folder or one it may use:
    an internal include names its folder, so that a reader sees the layer
    of every dependency at a glance.
Every quoted include of a file under tools/ctrack/ must be public or a file
of tools/ctrack/ itself, beside the includer or named from tools/ctrack/ (a
feature's subfolder: "export/export.h"); the tool uses the library's API,
nothing else.

Also refused: a source file directly in src/, a folder of src/ that the
table does not list, a table whose "may use" relation has a circle, a
circle between the modules of one folder (a module is NAME.c with NAME.h:
x.c including y.h while y.c or y.h includes x.h is a circle, whatever the
folders allow), and a folder whose README.md (its door) is missing or
states a "May use:" line other than the table's.

Prints one line per violation, "FILE:LINE: what", and exits 1 if there is
any; else prints a summary and exits 0.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
HEADING = '## where things are'


def read_layers(doc_path):
    """{folder: set(folders it may use)} and the errors found reading it."""
    errors = []
    try:
        lines = open(doc_path, encoding='utf-8').read().split('\n')
    except OSError as e:
        return None, ['%s: cannot read (%s)' % (doc_path, e.strerror)]
    start = None
    for i, line in enumerate(lines):
        if line.strip().lower() == HEADING:
            start = i + 1
            break
    if start is None:
        return None, ['%s: no "## Where things are" section' % doc_path]
    layers = {}
    for i in range(start, len(lines)):
        line = lines[i]
        if line.startswith('## '):
            break
        if not line.startswith('|'):
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        m = re.match(r'`?src/([a-z0-9_]+)/?`?$', cells[0])
        if not m:
            continue
        folder = m.group(1)
        uses = cells[-1].replace('`', '')
        deps = set()
        if not re.match(r'^(nothing|none|-|—)', uses.strip().lower()):
            for d in re.split(r'[,\s]+', uses):
                d = d.strip().rstrip('/').replace('src/', '')
                if d:
                    deps.add(d)
        if folder in layers:
            errors.append('%s:%d: src/%s/ listed twice' % (doc_path, i + 1, folder))
        layers[folder] = deps
    if not layers:
        return None, ['%s: the "Where things are" table lists no src/ folder' % doc_path]
    for f, deps in sorted(layers.items()):
        for d in sorted(deps):
            if d not in layers:
                errors.append('%s: src/%s/ may use "%s", which the table does not list'
                              % (doc_path, f, d))
    # the allowed relation itself must have no circle
    cyc = find_cycle({f: {d for d in deps if d in layers and d != f}
                      for f, deps in layers.items()})
    if cyc:
        errors.append('%s: the layers form a circle: %s' % (doc_path, ' -> '.join(cyc)))
    return layers, errors


def find_cycle(graph):
    """A circle in {node: set(nodes)}, as a list ending where it starts, or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {n: WHITE for n in graph}
    stack = []

    def visit(n):
        colour[n] = GREY
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if colour.get(m, BLACK) == GREY:
                return stack[stack.index(m):] + [m]
            if colour.get(m) == WHITE:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        colour[n] = BLACK
        return None

    for n in sorted(graph):
        if colour[n] == WHITE:
            c = visit(n)
            if c:
                return c
    return None


def sources(top):
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(('.c', '.h')):
                yield os.path.join(dirpath, f)


def includes(path):
    with open(path, encoding='utf-8', errors='replace') as fh:
        for n, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def check(root):
    doc = os.path.join(root, 'docs', 'architecture.md')
    layers, errors = read_layers(doc)
    if layers is None:
        return errors, 0, 0
    src = os.path.join(root, 'src')
    public = os.path.join(root, 'include')
    n_files = n_incs = 0
    # modules: (folder, stem) -> set((folder, stem)) within one folder
    modules = {}
    for d in sorted(os.listdir(src)):
        p = os.path.join(src, d)
        if os.path.isdir(p) and d not in layers:
            errors.append('src/%s/: a folder docs/architecture.md does not list' % d)
        elif os.path.isfile(p) and p.endswith(('.c', '.h')):
            errors.append('src/%s: every source file belongs to a stage folder' % d)
    for folder in sorted(layers):
        readme = os.path.join(src, folder, 'README.md')
        if not os.path.isdir(os.path.join(src, folder)):
            errors.append('%s: lists src/%s/, which does not exist' % (doc, folder))
            continue
        try:
            text = open(readme, encoding='utf-8').read()
        except OSError:
            errors.append('src/%s/README.md: missing (the folder\'s door: what it '
                          'promises, what it may use)' % folder)
            continue
        m = re.search(r'^May use:\s*(.*)$', text, re.M)
        if not m:
            errors.append('src/%s/README.md: no "May use:" line' % folder)
            continue
        said = m.group(1).strip().rstrip('.')
        said = set() if re.match(r'^(nothing|none)', said.lower()) else \
            {d.strip().rstrip('/') for d in said.split(',') if d.strip()}
        if said != layers[folder]:
            errors.append('src/%s/README.md: "May use: %s" but docs/architecture.md '
                          'says %s' % (folder, m.group(1).strip(),
                                       ', '.join(sorted(layers[folder])) or 'nothing'))
    for path in sources(src):
        rel = os.path.relpath(path, root)
        parts = os.path.relpath(path, src).split(os.sep)
        if len(parts) < 2 or parts[0] not in layers:
            continue
        folder = parts[0]
        stem = os.path.splitext(parts[-1])[0]
        me = (folder, stem)
        modules.setdefault(me, set())
        n_files += 1
        for n, inc in includes(path):
            n_incs += 1
            where = '%s:%d' % (rel, n)
            if inc.startswith('ctrack/'):
                if not os.path.isfile(os.path.join(public, inc)):
                    errors.append('%s: includes "%s", which include/ does not have' % (where, inc))
                continue
            ip = inc.split('/')
            if len(ip) < 2 or ip[0] not in layers:
                errors.append('%s: includes "%s": an internal include names its folder '
                              '("FOLDER/%s", FOLDER one of %s)'
                              % (where, inc, ip[-1], ', '.join(sorted(layers))))
                continue
            if not os.path.isfile(os.path.join(src, inc)):
                errors.append('%s: includes "%s", which src/ does not have' % (where, inc))
                continue
            dep = ip[0]
            if dep != folder and dep not in layers[folder]:
                allowed = ', '.join(sorted(layers[folder])) or 'nothing'
                errors.append('%s: includes "%s": src/%s/ may use %s, not %s/ '
                              '(docs/architecture.md, "Where things are")'
                              % (where, inc, folder, allowed, dep))
                continue
            if dep == folder:
                other = (dep, os.path.splitext(ip[-1])[0])
                if other != me:
                    modules[me].add(other)
    # circles between the modules of a folder
    for folder in sorted(layers):
        g = {m: {x for x in deps if x[0] == folder}
             for m, deps in modules.items() if m[0] == folder}
        cyc = find_cycle(g)
        if cyc:
            errors.append('src/%s/: its modules include each other in a circle: %s'
                          % (folder, ' -> '.join(m[1] for m in cyc)))
    # the tool: public headers and its own files only
    tool = os.path.join(root, 'tools', 'ctrack')
    if os.path.isdir(tool):
        for path in sources(tool):
            rel = os.path.relpath(path, root)
            n_files += 1
            for n, inc in includes(path):
                n_incs += 1
                if inc.startswith('ctrack/'):
                    continue
                # its own files: found beside the includer or from
                # tools/ctrack/ (a feature's subfolder, "export/export.h"),
                # never outside tools/ctrack/
                own = [os.path.realpath(os.path.join(d, inc))
                       for d in (os.path.dirname(path), tool)]
                if not any(os.path.isfile(p) and
                           p.startswith(os.path.realpath(tool) + os.sep)
                           for p in own):
                    errors.append('%s:%d: includes "%s": the tool uses the public API '
                                  '(ctrack/...) and its own files, nothing of src/'
                                  % (rel, n, inc))
    return errors, n_files, n_incs


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 2 or root in ('-h', '--help'):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    errors, n_files, n_incs = check(root)
    for e in errors:
        print(e)
    if errors:
        print('check-layers: %d violation%s' % (len(errors), '' if len(errors) == 1 else 's'))
        return 1
    print('check-layers: %d files, %d quoted includes, all in layer order' % (n_files, n_incs))
    return 0


if __name__ == '__main__':
    sys.exit(main())
