# Dump line tables of real code objects with the line of every instruction,
# as this interpreter computes it, for tests/unit/linetable.c.
# Output lines:  code <firstlineno> <hex table>   then   at <byteoffset> <line>
import dis
import sys


def sample(a, b):
    x = a + b
    if x > 10:
        for i in range(3):
            x += i

    else:
        x = [
            a,
            b,
        ]
    try:
        y = 1 / (a - a)
    except ZeroDivisionError:
        y = None
    return (x,
            y)


def walk(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from walk(c)


def table(code):
    if sys.version_info >= (3, 10):
        return code.co_linetable
    return code.co_lnotab


codes = [sample.__code__, dis.dis.__code__]
with open(dis.__file__) as f:
    codes.extend(walk(compile(f.read(), dis.__file__, "exec")))

for code in codes:
    print("code", code.co_firstlineno, table(code).hex())
    nbytes = len(code.co_code)
    if sys.version_info >= (3, 10):
        for start, end, line in code.co_lines():
            for off in range(start, end, 2):
                print("at", off, line if line is not None else 0)
    else:
        starts = list(dis.findlinestarts(code))
        for off in range(0, nbytes, 2):
            line = code.co_firstlineno
            for s, l in starts:
                if s <= off:
                    line = l
            print("at", off, line)
