#!/usr/bin/env python3
"""Finds file-local names that would collide in a unity build.

The sanitizer builds (scripts/test.sh) compile each library's sources in batches (CMake's unity
build), and every build the test targets' (tests/CMakeLists.txt), so two .cc files of one target
that each define, say, `IsFloat` in an anonymous namespace of the same enclosing namespace stop
the build, depending on which files share a batch. This check looks at every pair of files, so it does not depend on the
batching.

It reads the code line by line (definitions start in column 0 in clang-formatted code): types,
aliases and constants collide by name; functions collide by name and first line of parameters
(overloads with other parameters are legal C++). Exit status 1 with the collisions listed.
"""
import collections
import os
import re
import sys

FUNCTION = re.compile(r'^(?:\[\[\w+\]\]\s*|static\s+|inline\s+|constexpr\s+|template\s*<[^>]*>\s*)*'
                      r'[A-Za-z_][\w:<>,\s\*&]*?[\s\*&]([A-Za-z_]\w*)\s*\((.*)')
CONSTANT = re.compile(r'^(?:static\s+)?(?:constexpr|const)\s+(?:const\s+)?[\w:<>]+[\s\*&]+'
                      r'(?:const\s+)?([A-Za-z_]\w*)\s*[=\[{]')
# A using-declaration (`using a::B;`) may be repeated; an alias (`using B = ...;`) is a name.
TYPE = re.compile(r'^(?:template\s*<[^>]*>\s*)?(?:(?:struct|class|enum class|enum)\s+([A-Za-z_]\w*)'
                  r'|using\s+([A-Za-z_]\w*)\s*=)')
# A C++ raw string literal (a Python script in a test, say) opened and not closed on one line.
RAW_STRING_OPEN = re.compile(r'R"([^(\s]*)\(')
# Further names of one declaration: `constexpr int kA = 1, kB = 2;`.
MORE_CONSTANTS = re.compile(r',\s*([A-Za-z_]\w*)\s*=')
NAMED_NAMESPACE = re.compile(r'^namespace ([\w:]+) \{')
KEYWORDS = {'if', 'for', 'while', 'switch', 'operator', 'return', 'sizeof'}


def file_local_names(path):
    """Yields (enclosing namespace, key, line number) for each file-local definition."""
    named = []
    anonymous = False
    raw_end = None  # the end of the raw string literal being skipped
    with open(path, errors='replace') as f:
        for number, line in enumerate(f, 1):
            if raw_end:
                if raw_end in line:
                    raw_end = None
                continue
            m = RAW_STRING_OPEN.search(line)
            if m and f'){m.group(1)}"' not in line[m.end():]:
                raw_end = f'){m.group(1)}"'
            m = NAMED_NAMESPACE.match(line)
            if m:
                named.append(m.group(1))
                continue
            if line.startswith('namespace {'):
                anonymous = True
                continue
            if line.startswith('}  // namespace'):
                if anonymous and line.strip() == '}  // namespace':
                    anonymous = False
                elif named:
                    named.pop()
                continue
            if not (anonymous or line.startswith('static ')):
                continue
            if line[:1] in (' ', '\t', '#', '/', '}', ')'):
                continue
            ns = '::'.join(named)
            m = TYPE.match(line)
            if m:
                yield ns, next(g for g in m.groups() if g), number
                continue
            m = CONSTANT.match(line)
            if m:
                yield ns, m.group(1), number
                for name in MORE_CONSTANTS.findall(line[m.end():]):
                    yield ns, name, number
                continue
            m = FUNCTION.match(line)
            if m and m.group(1) not in KEYWORDS:
                yield ns, f'{m.group(1)}({m.group(2).strip()}', number


def self_test():
    """The check on small trees: pairs of files that collide, and a legal pair of look-alikes."""
    import tempfile

    def local(body, ns='epctx::compile'):
        return f'namespace {ns} {{\nnamespace {{\n{body}}}  // namespace\n}}  // namespace {ns}\n'

    # Legal together: using-declarations, overloads, a raw string holding code, another namespace.
    legal_a = local('using x::Y;\nbool IsFloat(int v) {\n  return v;\n}\nvoid Over(int a) {}\n')
    legal_b = (local('using x::Y;\nvoid Over(float a) {}\n'
                     'const char* kScript = R"py(\nbool IsFloat(int v) {\n)py";\n') +
               local('constexpr int kDepth = 4;\n', 'epctx::other'))
    cases = [  # (added to a.cc, added to b.cc, the exit status expected, what a wrong one means)
        ('', '', 0, 'a legal pair (using-declarations, overloads, raw strings) was reported'),
        ('', local('bool IsFloat(int v) {\n  return !v;\n}\n'), 1,
         'the IsFloat collision was not found'),
        (local('struct Section {};\n'), local('int Section(int kind) {\n  return kind;\n}\n'), 1,
         'a type and a function of one name (Section) were not found'),
        (local('constexpr int kTwo = 2;\n'), local('constexpr int kOne = 1, kTwo = 2;\n'), 1,
         'the second name of a declaration (kTwo) was not checked'),
    ]
    for added_a, added_b, expected, failure in cases:
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, 'src/compile'))
            for name, text in (('a.cc', legal_a + added_a), ('b.cc', legal_b + added_b)):
                with open(os.path.join(root, 'src/compile', name), 'w') as f:
                    f.write(text)
            if main(['', root]) != expected:
                print(f'self test: {failure}')
                return 1
    print('self test passed')
    return 0


def main(argv):
    if argv[1:] == ['--self-test']:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    # The kernel library (batched in the sanitizer builds), the other modules, the C API, the
    # command line, the Python module and the test targets (batched in every build).
    libraries = ['src/capi', 'src/compile', 'src/exec', 'src/format', 'src/io', 'src/loader',
                 'src/util', 'tools', 'python/src', 'tests/compile', 'tests/e2e', 'tests/exec',
                 'tests/format', 'tests/io', 'tests/loader', 'tests/tools']
    collisions = 0
    for library in libraries:
        seen = collections.defaultdict(list)
        for dirpath, _, files in os.walk(os.path.join(root, library)):
            for name in sorted(files):
                if name.endswith('.cc'):
                    path = os.path.join(dirpath, name)
                    for ns, key, number in file_local_names(path):
                        seen[(ns, key)].append(f'{os.path.relpath(path, root)}:{number}')
        # A type or constant and a function of one name in two files collide too.
        functions = collections.defaultdict(list)
        for (ns, key), places in seen.items():
            if '(' in key:
                functions[(ns, key.split('(')[0])] += places
        for (ns, key), places in list(seen.items()):
            if '(' not in key and (ns, key) in functions:
                seen[(ns, key)] = places + functions[(ns, key)]
        for (ns, key), places in sorted(seen.items()):
            files = {p.rsplit(':', 1)[0] for p in places}
            if len(files) > 1:
                collisions += 1
                print(f'{ns}::{key.split("(")[0]} is defined file-locally in {len(files)} files of '
                      f'{library}, which a unity build may put in one batch: {", ".join(places)}')
    if collisions:
        print(f'{collisions} collision(s): rename one of each, or share one definition in a header')
        return 1
    print('no file-local name of one library is defined twice')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
