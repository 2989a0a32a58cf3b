"""Random templates for the differential test (see README.md).

gen_case(rng) returns one template string over the context CTX, built from
a grammar of what paddiser's engine supports: expressions of every kind
(literals, arithmetic, comparisons, and/or/not, conditional expressions,
lists, tuples, dicts, subscripts, slices, filters, tests, string and dict
methods, % formatting, str * int, ~), and statements (if/elif/else, for
with else, an if filter, unpacking and loop.*, set, set blocks, macros with
defaults and keyword calls, comments), with the whitespace controls
(-, +, indented tags, blank lines) that trim_blocks and lstrip_blocks act
on. Types are mostly kept right so that most cases render; some are wrong
on purpose, and then both engines must fail.
"""

CTX = {
    "n": 4,
    "m": -7,
    "z": 0,
    "x": 2.5,
    "y": 0.1,
    "big": 1234567,
    "s": "Hello World",
    "w": "ior",
    "p": "/scratch/run_01/out.dat",
    "e": "",
    "q": "it's",
    "flag": True,
    "off": False,
    "nil": None,
    "nums": [3, 1, 2, 10],
    "fl": [1.5, 0.25, 3.0],
    "words": ["b", "A", "c", "a", "B"],
    "mixed": [1, "a", 2.5, None, True],
    "empty": [],
    "nested": [[1, 2], [3, 4]],
    "pairs": [["a", 1], ["b", 2]],
    "cfg": {"nodes": 2, "name": "ior", "ppn": 8, "opts": ["-w", "-r"]},
    "edict": {},
    "vars": {"nodes": 2, "ppn": 4, "block": "1m"},
    "command_env": {"OMP_NUM_THREADS": "4", "PATH_X": "/bin", "MODE": "fast"},
    "command_labels": {"site": "lab", "tier": "hot"},
}

INT_NAMES = ["n", "m", "z", "big", "cfg.nodes", "cfg.ppn", "vars.nodes", "vars.ppn"]
FLOAT_NAMES = ["x", "y"]
STR_NAMES = ["s", "w", "p", "e", "q", "cfg.name", "vars.block", "command_env.MODE", "command_labels.site"]
LIST_NAMES = ["nums", "fl", "words", "mixed", "empty", "nested", "pairs", "cfg.opts"]
DICT_NAMES = ["cfg", "edict", "vars", "command_env", "command_labels"]
BOOL_NAMES = ["flag", "off"]

STR_LITS = ["'a'", "'abc'", "'Hello'", "\"x y\"", "''", "'a-b_c'", "'%'", "' pad '", "'O''K'", "'10'", "'3.5'",
            "'UPPER lower'", "'a,b,c'", "'x\\'y'", "'tab\\there'", "'line\\nbreak'"]


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.locals = []  # names bound by for/set/macro parameters in scope: (name, type)
        self.macros = []  # (name, nparams, nrequired, param names)

    def pick(self, xs):
        return self.r.choice(xs)

    def chance(self, p):
        return self.r.random() < p

    # ---- expressions by type
    def local_of(self, t):
        c = [n for n, ty in self.locals if ty == t]
        return self.pick(c) if c else None

    def int_e(self, d):
        r = self.r.random()
        loc = self.local_of("int")
        if d <= 0 or r < 0.35:
            if loc and self.chance(0.4):
                return loc
            return self.pick([str(self.r.randint(-5, 20)), self.pick(INT_NAMES), "0", "1", "2"])
        k = self.r.randint(0, 13)
        if k == 0:
            return "(%s %s %s)" % (self.int_e(d - 1), self.pick(["+", "-", "*"]), self.int_e(d - 1))
        if k == 1:
            return "(%s %s %s)" % (self.int_e(d - 1), self.pick(["//", "%"]), self.pick(["3", "2", "-4", "n"]))
        if k == 2:
            return "%s|length" % self.pick([self.list_e(d - 1), self.str_e(d - 1), self.pick(DICT_NAMES)])
        if k == 3:
            return "%s|int" % self.pick([self.pick(FLOAT_NAMES), "'42'", "'3.9'", "'x'", "nil", "flag", "x * 3"])
        if k == 4:
            return "%s|%s" % (self.pick(["nums", "[4, 2, 9]", "range(5)"]), self.pick(["sum", "max", "min", "first", "last"]))
        if k == 5:
            return "loop.index" if self.in_loop() else "(%s)|abs" % self.int_e(d - 1)
        if k == 6:
            return "%s[%d]" % (self.pick(["nums", "[7, 8, 9]"]), self.r.randint(-3, 2))
        if k == 7:
            return "(%s if %s else %s)" % (self.int_e(d - 1), self.bool_e(d - 1), self.int_e(d - 1))
        if k == 8:
            return "%s ** %d" % (self.int_e(0), self.r.randint(0, 3))
        if k == 9:
            return "cfg['%s']" % self.pick(["nodes", "ppn"])
        if k == 10:
            return "%s|round" % self.int_e(d - 1)
        if k == 11:
            return "%s|wordcount" % self.str_e(d - 1)
        if k == 12:
            return "loop.length" if self.in_loop() else "nums|length"
        return "(%s)" % self.int_e(d - 1)

    def float_e(self, d):
        if d <= 0 or self.chance(0.4):
            return self.pick(FLOAT_NAMES + ["1.5", "0.25", "2.0", "1e3", "3.14159", "-0.5"])
        k = self.r.randint(0, 6)
        if k == 0:
            return "(%s / %s)" % (self.int_e(d - 1), self.pick(["2", "4", "n", "3"]))
        if k == 1:
            return "(%s %s %s)" % (self.float_e(d - 1), self.pick(["+", "-", "*"]), self.pick([self.float_e(d - 1), self.int_e(d - 1)]))
        if k == 2:
            return "%s|round(%d)" % (self.float_e(d - 1), self.r.randint(0, 3))
        if k == 3:
            return "%s|round(%d, '%s')" % (self.float_e(d - 1), self.r.randint(0, 2), self.pick(["floor", "ceil", "common"]))
        if k == 4:
            return "%s|float" % self.pick(["'2.5'", "3", "'x'", "n", "'1e2'"])
        if k == 5:
            return "fl|sum"
        return "%s|abs" % self.float_e(d - 1)

    def str_e(self, d):
        loc = self.local_of("str")
        if d <= 0 or self.chance(0.3):
            if loc and self.chance(0.4):
                return loc
            return self.pick(STR_LITS + STR_NAMES)
        k = self.r.randint(0, 24)
        s1 = lambda: self.str_e(d - 1)
        if k == 0:
            return "%s ~ %s" % (s1(), self.any_e(d - 1))
        if k == 1:
            return "%s|%s" % (s1(), self.pick(["upper", "lower", "title", "capitalize", "trim", "reverse", "string"]))
        if k == 2:
            return "%s|replace(%s, %s)" % (s1(), self.pick(["'a'", "'l'", "'o'", "' '"]), self.pick(["'_'", "''", "'XY'"]))
        if k == 3:
            return "%s|join(%s)" % (self.list_e(d - 1), self.pick(["', '", "'-'", "''"]))
        if k == 4:
            return "%s|center(%d)" % (s1(), self.r.randint(0, 15))
        if k == 5:
            return "%s|truncate(%d%s)" % (self.pick(["s", "'a long sentence with words'", "p"]), self.r.randint(3, 14),
                                          self.pick(["", ", true", ", false, '..'", ", leeway=0", ", killwords=true, leeway=1"]))
        if k == 6:
            return "%s %% %s" % (self.pick(["'%s-%s'", "'%d:%s'", "'%05d'", "'%.2f'", "'%5.1f|'", "'%-6s|'", "'%x'", "'%s'",
                                              "'%+d'", "'%e'", "'%g'", "'%3s%%'", "'%r'", "'%i'", "'%10.3f'"]),
                                 self.pick(["(n, w)", "(7, 'a')", "42", "x", "(x,)", "big", "(w,)", "(m, s)", "'t'", "nums",
                                            "(1, 2, 3)", "y", "(n,)", "q", "-3"]))
        if k == 7:
            return "%s * %d" % (self.pick(["'ab'", "w", "'-'", "e"]), self.r.randint(-1, 4))
        if k == 8:
            return "%s|format(%s)" % (self.pick(["'%s=%d'", "'%s'", "'%.1f%%'", "'[%5s]'"]),
                                      self.pick(["w, n", "'k', 3", "x", "nums", "y", "s"]))
        if k == 9:
            return "%s.%s()" % (self.pick(["s", "w", "' padded '", "p"]), self.pick(["upper", "lower", "strip", "lstrip", "rstrip"]))
        if k == 10:
            return "%s.replace(%s, %s)" % (self.pick(["s", "p", "'aaa'"]), self.pick(["'a'", "'/'", "'o'"]), self.pick(["'b'", "'::'"]))
        if k == 11:
            return "%s.split(%s)%s" % (self.pick(["p", "s", "'a,b,,c'"]), self.pick(["'/'", "", "','", "'o'"]),
                                      self.pick(["[0]", "[-1]", "|join('+')", "|length"]))
        if k == 12:
            # a name, not a literal: Jinja2 folds constants when it compiles, so
            # ''[0] fails even in a branch not taken (see README.md)
            return "%s[%s]" % (self.pick(STR_NAMES), self.pick(["0", "-1", "1:3", ":2", "-3:", "2:"]))
        if k == 13:
            return "%s|default(%s%s)" % (self.pick(["undefined_name", "nil", "e", "w"]), self.pick(["'dflt'", "w"]),
                                         self.pick(["", ", true"]))
        if k == 14:
            return "(%s if %s else %s)" % (s1(), self.bool_e(d - 1), s1())
        if k == 15:
            return "%s|%s" % (self.pick(["words", "['b', 'a', 'C']", "nums", "command_env", "cfg"]),
                              self.pick(["sort|join(',')", "sort(reverse=true)|join", "unique|join('/')", "reverse|join",
                                         "list|string", "first", "last", "max", "min", "sort(case_sensitive=true)|join",
                                         "dictsort|string"]))
        if k == 16:
            return "command_env.get(%s%s)" % (self.pick(["'MODE'", "'NOPE'", "'PATH_X'"]), self.pick(["", ", 'none'"]))
        if k == 17:
            return "%s|string" % self.any_e(d - 1)
        if k == 18:
            return "'%s'.zfill(%d)" % (self.pick(["7", "-3", "abc"]), self.r.randint(0, 5))
        if k == 19:
            return "%s.startswith(%s)|string" % (s1(), self.pick(["'H'", "'/'", "''"]))
        if k == 20:
            if self.macros:
                return self.call_macro(d - 1)
            return s1()
        if k == 21:
            return "%s ~ %s" % (s1(), self.pick(["loop.index0" if self.in_loop() else "n", "'!'"]))
        if k == 22:
            return "%s|trim(%s)" % (self.pick(["'xxhixx'", "s", "'..a..'"]), self.pick(["'x'", "'.'", "'Hd'"]))
        if k == 23:
            return "%s|replace(%s, %s, %d)" % (s1(), self.pick(["'l'", "'o'"]), self.pick(["'L'", "'0'"]), self.r.randint(0, 2))
        return "%s ~ %s" % (s1(), s1())

    def in_loop(self):
        return any(n == "loop" for n, _ in self.locals)

    def bool_e(self, d):
        if d <= 0 or self.chance(0.25):
            return self.pick(BOOL_NAMES + ["true", "false", "True", "none", "nil"])
        k = self.r.randint(0, 12)
        if k == 0:
            return "%s %s %s" % (self.int_e(d - 1), self.pick(["<", "<=", "==", "!=", ">", ">="]), self.int_e(d - 1))
        if k == 1:
            return "%s %s %s" % (self.str_e(d - 1), self.pick(["==", "!=", "<", ">="]), self.str_e(d - 1))
        if k == 2:
            return "%s %s %s" % (self.pick([self.int_e(0), self.str_e(0), "'a'", "'nodes'"]), self.pick(["in", "not in"]),
                                 self.pick(["nums", "words", "cfg", "vars", "s", "'xaby'", "command_env", "edict", "range(4)"]))
        if k == 3:
            return "(%s %s %s)" % (self.bool_e(d - 1), self.pick(["and", "or"]), self.bool_e(d - 1))
        if k == 4:
            return "not %s" % self.bool_e(d - 1)
        if k == 5:
            return "%s is %s%s" % (self.any_e(d - 1), self.pick(["", "not "]),
                                   self.pick(["defined", "undefined", "none", "number", "string", "mapping", "sequence",
                                              "iterable", "integer", "float", "boolean", "even", "odd", "divisibleby 3",
                                              "divisibleby(2)", "lower", "upper", "true", "false", "eq 4", "gt(2)",
                                              "in [1, 2, 'a']", "ge 0", "lt 10", "ne 'a'"]))
        if k == 6:
            return "%s is %sdefined" % (self.pick(["undefined_name", "n", "cfg.nodes", "cfg.nope", "vars.block",
                                                   "command_env.MODE", "command_env.NOPE"]), self.pick(["", "not "]))
        if k == 7:
            return "%s %s %s %s %s" % (self.int_e(0), self.pick(["<", "<="]), self.int_e(0), self.pick(["<", "<="]), self.int_e(0))
        if k == 8:
            return "%s == %s" % (self.any_e(d - 1), self.any_e(d - 1))
        if k == 9:
            return "%s.%s(%s)" % (self.pick(["s", "p", "w"]), self.pick(["startswith", "endswith"]), self.pick(["'H'", "'.dat'", "'r'", "''"]))
        if k == 10:
            return "loop.first" if self.in_loop() else "flag"
        if k == 11:
            return "loop.last" if self.in_loop() else "off"
        return "%s" % self.pick(["nums", "empty", "edict", "e", "s", "0", "0.0", "z"])

    def list_e(self, d):
        loc = self.local_of("list")
        if d <= 0 or self.chance(0.35):
            if loc and self.chance(0.4):
                return loc
            return self.pick(LIST_NAMES + ["[1, 2, 3]", "['x', 'y']", "[]", "[1, 'a', none]", "[[1], [2, 3]]"])
        k = self.r.randint(0, 11)
        if k == 0:
            return "[%s]" % ", ".join(self.any_e(d - 1) for _ in range(self.r.randint(0, 3)))
        if k == 1:
            return "%s + %s" % (self.list_e(d - 1), self.list_e(d - 1))
        if k == 2:
            return "range(%s)|list" % self.pick(["3", "n", "1, 6, 2", "5, 0, -2", "0"])
        if k == 3:
            return "%s|%s" % (self.pick(["nums", "words", "[3, 1, 2]", "fl"]), self.pick(["sort", "sort(reverse=true)", "unique|list", "reverse|list", "list"]))
        if k == 4:
            return "%s|list" % self.pick(["s", "w", "cfg", "command_env", "e"])
        if k == 5:
            return "%s.%s()|list" % (self.pick(DICT_NAMES), self.pick(["keys", "values", "items"]))
        if k == 6:
            return "%s[%s]" % (self.pick(["nums", "words", "nested"]), self.pick(["1:", ":-1", "1:3", ":"]))
        if k == 7:
            return "%s.split(%s)" % (self.pick(["p", "s", "'a b  c'"]), self.pick(["'/'", "", "' '"]))
        if k == 8:
            return "%s * %d" % (self.pick(["[0]", "['a', 1]"]), self.r.randint(0, 3))
        if k == 9:
            return "%s|items|list" % self.pick(DICT_NAMES)
        if k == 10:
            return "%s|dictsort" % self.pick(DICT_NAMES)
        return "nested[%d]" % self.r.randint(-2, 1)

    def dict_e(self, d):
        if d <= 0 or self.chance(0.5):
            return self.pick(DICT_NAMES)
        n = self.r.randint(0, 3)
        keys = self.r.sample(["'a'", "'b'", "'k1'", "1", "'x y'"], n)
        return "{%s}" % ", ".join("%s: %s" % (k, self.any_e(d - 1)) for k in keys)

    def any_e(self, d):
        return self.pick([self.int_e, self.float_e, self.str_e, self.str_e, self.bool_e, self.list_e, self.dict_e])(d)

    def out_e(self, d):
        r = self.r.random()
        if r < 0.06:
            return self.pick(["(1, 'a')", "(n,)", "()", "pairs[0]", "(w, [1, 2])"])
        if r < 0.1:
            return self.pick(["range(3)", "nums|reverse", "cfg.items()", "words|unique", "cfg|items"])  # both refuse or print objects
        if r < 0.14:
            return "%s %s %s" % (self.pick(["'5'", "nums", "cfg", "nil"]), self.pick(["+", "-", "*", "<"]), self.pick(["1", "'a'", "nums"]))
        return self.any_e(d)

    def call_macro(self, d):
        name, nparams, nreq, pnames = self.pick(self.macros)
        nargs = self.r.randint(nreq, nparams)
        args = [self.any_e(max(d, 0)) for _ in range(nargs)]
        if nargs < nparams and self.chance(0.5):  # a keyword argument
            args.append("%s=%s" % (pnames[self.r.randint(nargs, nparams - 1)], self.str_e(0)))
        return "%s(%s)" % (name, ", ".join(args))

    # ---- statements
    def text(self):
        return self.pick(["a", "B ", " x ", "\n", "line\n", "  ", "\n\n", "-", "{ not a tag }", "}}", "%", "#x", "\t", ", ", "text\n  ", "\n    "])

    def tag(self, body, kind="%"):
        lm = self.pick(["", "", "", "", "-", "+"] if kind != "{" else ["", "", "", "-"])
        rm = self.pick(["", "", "", "", "-", "+"] if kind != "{" else ["", "", "", "-"])
        close = {"%": "%}", "{": "}}", "#": "#}"}[kind]
        tag = "{" + kind + lm + " " + body + " " + rm + close
        if kind != "{" and self.chance(0.35):  # on its own line, maybe indented
            return "\n" + self.pick(["", "  ", "\t", "    "]) + tag + self.pick(["\n", "", "\n  "])
        return tag

    def block(self, d, n=None):
        parts = []
        for _ in range(n if n is not None else self.r.randint(1, 4)):
            parts.append(self.stmt(d))
        return "".join(parts)

    def stmt(self, d):
        r = self.r.random()
        if d <= 0 or r < 0.25:
            return self.text()
        if r < 0.5:
            return self.tag(self.out_e(2), "{")
        k = self.r.randint(0, 9)
        if k == 0:
            return self.tag(self.pick(["a comment", "{{ x }}", ""]), "#")
        if k in (1, 2):
            s = self.tag("if %s" % self.bool_e(2)) + self.block(d - 1)
            for _ in range(self.r.randint(0, 2)):
                s += self.tag("elif %s" % self.bool_e(2)) + self.block(d - 1)
            if self.chance(0.5):
                s += self.tag("else") + self.block(d - 1)
            return s + self.tag("endif")
        if k in (3, 4):
            return self.for_stmt(d)
        if k in (5, 6):
            t = self.pick(["int", "str", "list"])
            name = self.pick(["v", "acc", "tmp", "n", "w"])  # n and w shadow the context
            val = {"int": self.int_e, "str": self.str_e, "list": self.list_e}[t](2)
            if self.chance(0.15):
                s = self.tag("set %s, %s = %s, %s" % (name, name + "2", val, self.int_e(1)))
                self.locals.append((name + "2", "int"))
            elif self.chance(0.15):
                s = self.tag("set %s" % name) + self.block(d - 1, 2) + self.tag("endset")
                t = "str"
            else:
                s = self.tag("set %s = %s" % (name, val))
            self.locals.append((name, t))
            return s
        if k == 7:
            return self.macro_stmt(d)
        if k == 8 and self.macros:
            return self.tag(self.call_macro(1), "{")
        return self.tag(self.out_e(3), "{")

    def for_stmt(self, d):
        mark = len(self.locals)
        kind = self.r.randint(0, 5)
        if kind == 0:
            head, binds = "k, v in %s" % self.pick(["cfg.items()", "command_env.items()", "pairs", "vars|dictsort", "nested", "{'a': 1}.items()"]), [("k", "str"), ("v", "int")]
        elif kind == 1:
            head, binds = "k in %s" % self.pick(DICT_NAMES + ["{'b': 1, 'a': 2}"]), [("k", "str")]
        elif kind == 2:
            head, binds = "i in %s" % self.pick(["range(%s)" % self.pick(["3", "n", "0", "1, 4"]), "nums", "[1, 2, 3]", "empty"]), [("i", "int")]
        elif kind == 3:
            head, binds = "c in %s" % self.pick(["w", "e", "'xyz'", "words", "s.split()"]), [("c", "str")]
        else:
            head, binds = "item in %s" % self.list_e(1), [("item", "any")]
        if self.chance(0.3):
            var = binds[0][0]
            head += " if %s" % self.pick(["%s" % var, "%s != 'a'" % var, "%s is number" % var, "%s is string" % var, "%s in ['a', 1, 2]" % var, "not %s" % var])
        self.locals += binds + [("loop", "loop")]
        body = self.block(d - 1)
        if self.chance(0.5):
            body += self.tag(self.pick(["loop.index", "loop.index0", "loop.revindex", "loop.revindex0", "loop.first",
                                        "loop.last", "loop.length", "loop.depth", "loop.previtem is defined",
                                        "loop.nextitem|default('end')", "loop.index ~ '/' ~ loop.length"]), "{")
        del self.locals[mark:]
        s = self.tag("for " + head) + body
        if self.chance(0.4):
            s += self.tag("else") + self.block(d - 1)
        return s + self.tag("endfor")

    def macro_stmt(self, d):
        name = "m%d" % len(self.macros)
        nparams = self.r.randint(0, 3)
        pnames = ["a", "b", "c"][:nparams]
        nreq = self.r.randint(0, nparams)
        params = []
        for i, pn in enumerate(pnames):
            params.append(pn if i < nreq else "%s=%s" % (pn, self.pick(["1", "'d'", "none", "n", "[1]"])))
        mark = len(self.locals)
        self.locals += [(pn, "any") for pn in pnames]
        body = self.block(d - 1, self.r.randint(1, 3)) + "".join(self.tag(pn, "{") for pn in pnames if self.chance(0.7))
        del self.locals[mark:]
        s = self.tag("macro %s(%s)" % (name, ", ".join(params))) + body + self.tag("endmacro")
        self.macros.append((name, nparams, nreq, pnames))
        if self.chance(0.7):
            s += self.tag(self.call_macro(1), "{")
        return s


def gen_case(rng):
    g = Gen(rng)
    if rng.random() < 0.3:  # a single expression, deeper
        return "{{ %s }}" % g.out_e(4)
    return g.block(3, rng.randint(1, 6))
