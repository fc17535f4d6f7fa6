"""The compile situations a generated program is made of, each with what it plants.

A :class:`Situation` is one compiled function (or module) and the calls made to it, in
order: the source that defines it, and per call the statements around it and the one thing
the call changes (:attr:`Step.planted`: which guard source, which limit, which error).  The
generator (:mod:`.generator`) interleaves the calls of a few situations; the program prints
what each call did (:mod:`.harness`), so the truth the oracle compares with is what torch
did, and the planted change says which guard a recompile must be explained by.

Every situation changes one thing at a time, monotonically (sizes 4, 6, 8 ...; dtypes one
after the other), so each new version differs from every earlier one in that thing alone:
whichever cached version torch names first, its failed guard is of the planted source.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

#: Guard sources a situation can plant; the oracle's words for each (:mod:`.oracle`).
GUARD_SOURCES = (
    "shape",
    "stride",
    "dtype",
    "device",
    "requires_grad",
    "grad_mode",
    "default_dtype",
    "autocast",
    "deterministic",
    "global",
    "module_attribute",
    "closure_cell",
    "list_length",
    "dict_keys",
    "python_int",
    "python_float",
)

#: Graph breaks a situation can plant: (kind, the statement, what it needs defined first).
BREAKS: dict[str, tuple[str, str]] = {
    "graph_break_call": ("torch._dynamo.graph_break()", ""),
    "print": ('print("planted print")', ""),
    "tensor_item": ("y = y + float(x.sum().item())", ""),
    "disabled_call": ("y = _disabled(y)", "_disabled = torch._dynamo.disable(lambda t: t + 1)"),
    "data_dependent_branch": ("y = y + 1 if x.sum() > 0 else y - 1", ""),
}


@dataclass
class Step:
    """One call: statements before and after it, an optional ``with`` around it."""

    call: str  # the expression calling the compiled function
    pre: list[str] = field(default_factory=list)
    post: list[str] = field(default_factory=list)
    ctx: str | None = None
    #: Made from a thread of its own (started and joined: the order stays the program's).
    thread: bool = False
    #: What this call changes or crosses, e.g. {"guard": "dtype"}, {"limit": 2},
    #: {"error_on_recompile": True}, {"backend_error": "suppressed"}.
    planted: dict[str, object] = field(default_factory=dict)


@dataclass
class Situation:
    kind: str  # "guard:dtype", "break:print", "limit", "mark_dynamic", ...
    function: str  # the name torch logs for the compiled code ("forward" for a module)
    code: str  # expression for the code object whose cache entries are counted
    defs: list[str]
    steps: list[Step]
    #: Lines of ``defs`` planted with a graph break: (kind, index in defs).
    breaks: list[tuple[str, int]] = field(default_factory=list)
    fullgraph: bool = False
    backend: str = "eager"
    config: dict[str, object] = field(default_factory=dict)  # module-level dynamo config
    tags: set[str] = field(default_factory=set)


def _compiled(name: str, target: str, backend: str, fullgraph: bool, dynamic: str) -> str:
    fg = ", fullgraph=True" if fullgraph else ""
    dyn = f", dynamic={dynamic}" if dynamic != "None" else ""
    return f"c_{name} = torch.compile({target}, backend={backend!r}{fg}{dyn})"


Builder = Callable[[random.Random, str, str, bool], Situation]


def _variants(rng: random.Random, values: list[str], repeat: bool = True) -> list[str]:
    """Values in order, each new one once, with some repeats of an earlier one (a reuse)."""
    n = rng.randint(2, len(values))
    seq = list(values[:n])
    if repeat and rng.random() < 0.5:
        seq.insert(rng.randint(1, len(seq)), seq[rng.randrange(len(seq))])
    return seq


def _plant(seq: list[str], source: str) -> list[dict[str, object]]:
    """The planted change of each call: the source where the value is new, else a reuse."""
    seen: set[str] = set()
    out: list[dict[str, object]] = []
    for value in seq:
        out.append({} if not seen else ({"reuse": True} if value in seen else {"guard": source}))
        seen.add(value)
    return out


def guard_situation(rng: random.Random, name: str, backend: str, fullgraph: bool) -> Situation:
    """One function recompiled (or reused) for one guard source, changed monotonically."""
    source = rng.choice(GUARD_SOURCES)
    compiled = _compiled(name, name, backend, fullgraph, "False")
    defs: list[str] = []
    steps: list[Step] = []
    code = f"{name}.__code__"
    function = name
    if source in ("shape", "stride", "dtype", "device", "requires_grad"):
        defs = [f"def {name}(x):", "    return x.sin() * 2 + 1", compiled]
        values = {
            "shape": ["torch.ones(4)", "torch.ones(6)", "torch.ones(8)", "torch.ones(10)"],
            "stride": ["torch.ones(4, 6)", "torch.ones(6, 4).t()"],
            "dtype": [
                "torch.ones(4)",
                "torch.ones(4, dtype=torch.float64)",
                "torch.ones(4, dtype=torch.float16)",
                "torch.ones(4, dtype=torch.bfloat16)",
            ],
            "requires_grad": ["torch.ones(4)", "torch.ones(4, requires_grad=True)"],
            # the only other device of a CPU machine: torch logs the move as a dispatch
            # key set mismatch (CPU keys, then Meta keys)
            "device": ["torch.ones(4)", 'torch.ones(4, device="meta")'],
        }[source]
        seq = _variants(rng, values)
        steps = [
            Step(f"c_{name}({v})", planted=p) for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source in ("grad_mode", "autocast"):
        defs = [f"def {name}(x):", "    return (x @ x.t()).sin()", compiled]
        arg = (
            "torch.ones(4, 4, requires_grad=True)" if source == "grad_mode" else "torch.ones(4, 4)"
        )
        ctx = (
            "torch.no_grad()"
            if source == "grad_mode"
            else 'torch.autocast("cpu", dtype=torch.bfloat16)'
        )
        seq = _variants(rng, ["off", "on"])
        steps = [
            Step(f"c_{name}({arg})", ctx=ctx if v == "on" else None, planted=p)
            for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source in ("default_dtype", "deterministic"):
        if source == "default_dtype":
            defs = [f"def {name}(x):", "    return x + torch.ones(4)", compiled]
            on, off = (
                ["torch.set_default_dtype(torch.float64)"],
                ["torch.set_default_dtype(torch.float32)"],
            )
        else:
            defs = [f"def {name}(x):", "    return x.cumsum(0) * 2", compiled]
            on, off = (
                ["torch.use_deterministic_algorithms(True)"],
                ["torch.use_deterministic_algorithms(False)"],
            )
        seq = _variants(rng, ["off", "on"])
        steps = [
            Step(
                f"c_{name}(torch.ones(4))",
                pre=on if v == "on" else [],
                post=off if v == "on" else [],
                planted=p,
            )
            for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source == "global":
        flag = f"FLAG_{name.upper()}"
        defs = [
            f"{flag} = False",
            f"def {name}(x):",
            f"    return x + 1 if {flag} else x - 1",
            compiled,
        ]
        seq = _variants(rng, ["False", "True"])
        steps = [
            Step(f"c_{name}(torch.ones(4))", pre=[f"{flag} = {v}"], planted=p)
            for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source == "module_attribute":
        cls, obj = f"M_{name}", f"m_{name}"
        defs = [
            f"class {cls}(torch.nn.Module):",
            "    def __init__(self):",
            "        super().__init__()",
            "        self.flag = False",
            "    def forward(self, x):",
            "        return x + 1 if self.flag else x * 2",
            f"{obj} = {cls}()",
            _compiled(name, obj, backend, fullgraph, "False"),
        ]
        code, function = f"{cls}.forward.__code__", "forward"
        seq = _variants(rng, ["False", "True"])
        steps = [
            Step(f"c_{name}(torch.ones(4))", pre=[f"{obj}.flag = {v}"], planted=p)
            for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source == "closure_cell" and rng.random() < 0.5:
        # the compiled function calls a closure: torch guards the cell through its source,
        # ``G['g_f0'].__closure__[0].cell_contents`` (a cell the log names as such)
        defs = [
            f"def make_g_{name}():",
            "    k = 2",
            "    def g(x):",
            "        return x * k if k > 2 else x + k",
            "    def set_k(v):",
            "        nonlocal k",
            "        k = v",
            "    return g, set_k",
            f"g_{name}, set_{name} = make_g_{name}()",
            f"def {name}(x):",
            f"    return g_{name}(x) * 2",
            compiled,
        ]
        seq = _variants(rng, ["2", "3"])
        steps = [
            Step(f"c_{name}(torch.ones(4))", pre=[f"set_{name}({v})"], planted=p)
            for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source == "closure_cell":
        defs = [
            f"def make_{name}():",
            "    k = 2",
            f"    def {name}(x):",
            "        return x * k if k > 2 else x + k",
            "    def set_k(v):",
            "        nonlocal k",
            "        k = v",
            f"    return {name}, set_k",
            f"{name}, set_{name} = make_{name}()",
            compiled,
        ]
        seq = _variants(rng, ["2", "3"])
        steps = [
            Step(f"c_{name}(torch.ones(4))", pre=[f"set_{name}({v})"], planted=p)
            for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source == "list_length":
        defs = [f"def {name}(xs):", "    return sum(x.sin() for x in xs)", compiled]
        seq = _variants(rng, ["[torch.ones(3)] * 2", "[torch.ones(3)] * 3", "[torch.ones(3)] * 4"])
        steps = [
            Step(f"c_{name}({v})", planted=p) for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    elif source == "dict_keys":
        defs = [f"def {name}(d):", "    return sum(v * 2 for v in d.values())", compiled]
        seq = _variants(
            rng,
            [
                '{"a": torch.ones(3)}',
                '{"b": torch.ones(3)}',
                '{"a": torch.ones(3), "b": torch.ones(3)}',
            ],
        )
        steps = [
            Step(f"c_{name}({v})", planted=p) for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    else:  # python_int, python_float
        defs = [f"def {name}(x, n):", "    return x * n + 1", compiled]
        values = ["2", "3", "5", "7"] if source == "python_int" else ["0.5", "1.5", "2.5"]
        seq = _variants(rng, values)
        steps = [
            Step(f"c_{name}(torch.ones(4), {v})", planted=p)
            for v, p in zip(seq, _plant(seq, source), strict=True)
        ]
    return Situation(
        f"guard:{source}",
        function,
        code,
        defs,
        steps,
        fullgraph=fullgraph,
        backend=backend,
        tags={source},
    )


def limit_situation(rng: random.Random, name: str, backend: str, fullgraph: bool) -> Situation:
    """More distinct dtypes than the recompile limit lets compile (one limit per program)."""
    limit = rng.randint(1, 3)
    key = rng.choice(["recompile_limit", "cache_size_limit"])
    dtypes = ["float32", "float64", "float16", "bfloat16", "int32", "int64"]
    n = min(len(dtypes), limit + rng.randint(1, 3))
    seq = dtypes[:n]
    if rng.random() < 0.5:
        seq = seq + [seq[0]]  # a version it has: reused whatever the limit
    steps = []
    for i, dt in enumerate(seq):
        planted: dict[str, object] = {}
        if 0 < i < n:
            planted = {"guard": "dtype"} if i < limit else {"limit": limit}
        elif i >= n:
            planted = {"reuse": True}
        steps.append(Step(f"c_{name}(torch.ones(4, dtype=torch.{dt}))", planted=planted))
    defs = [
        f"def {name}(x):",
        "    return (x * 2).sum()",
        _compiled(name, name, backend, fullgraph, "False"),
    ]
    return Situation(
        "limit" + (":fullgraph" if fullgraph else ""),
        name,
        f"{name}.__code__",
        defs,
        steps,
        fullgraph=fullgraph,
        backend=backend,
        config={key: limit},
        tags={"recompile_limit", key},
    )


def error_on_recompile_situation(
    rng: random.Random, name: str, backend: str, fullgraph: bool
) -> Situation:
    """A recompile made while ``error_on_recompile`` (or the fail_on_recompile stance) is on."""
    stance = rng.random() < 0.4
    on = (
        ['torch.compiler.set_stance("fail_on_recompile")']
        if stance
        else ["torch._dynamo.config.error_on_recompile = True"]
    )
    off = (
        ['torch.compiler.set_stance("default")']
        if stance
        else ["torch._dynamo.config.error_on_recompile = False"]
    )
    defs = [
        f"def {name}(x):",
        "    return x.cos() - 1",
        _compiled(name, name, backend, fullgraph, "False"),
    ]
    steps = [
        Step(f"c_{name}(torch.ones(4))"),
        Step(
            f"c_{name}(torch.ones(6))",
            pre=on,
            post=off,
            planted={"error_on_recompile": "stance" if stance else "config"},
        ),
    ]
    if rng.random() < 0.6:
        steps.append(Step(f"c_{name}(torch.ones(6))", planted={"guard": "shape"}))
    tag = "fail_on_recompile_stance" if stance else "error_on_recompile"
    return Situation(
        tag, name, f"{name}.__code__", defs, steps, fullgraph=fullgraph, backend=backend, tags={tag}
    )


def backend_error_situation(
    rng: random.Random, name: str, backend: str, fullgraph: bool
) -> Situation:
    """A backend that raises: raised to the program, or run eagerly under suppress_errors."""
    suppress = rng.random() < 0.5
    fg = ", fullgraph=True" if fullgraph else ""
    defs = [
        f"def _failing_{name}(gm, example_inputs):",
        '    raise RuntimeError("planted backend failure")',
        f"def {name}(x):",
        "    return x.tanh() + 3",
        f"c_{name} = torch.compile({name}, backend=_failing_{name}{fg})",
    ]
    pre = ["torch._dynamo.config.suppress_errors = True"] if suppress else []
    post = ["torch._dynamo.config.suppress_errors = False"] if suppress else []
    steps = [
        Step(
            f"c_{name}(torch.ones(4))",
            pre=pre,
            post=post,
            planted={"backend_error": "suppressed" if suppress else "raised"},
        )
    ]
    if rng.random() < 0.5:
        steps.append(
            Step(
                f"c_{name}(torch.ones(5))",
                pre=pre,
                post=post,
                planted={"backend_error": "suppressed" if suppress else "raised"},
            )
        )
    tag = "backend_error_suppressed" if suppress else "backend_error_raised"
    return Situation(
        tag,
        name,
        f"{name}.__code__",
        defs,
        steps,
        fullgraph=fullgraph,
        backend="failing",
        tags={tag},
    )


def user_raise_situation(rng: random.Random, name: str, backend: str, fullgraph: bool) -> Situation:
    """The function itself raises on some calls (an error of the program, not of torch)."""
    defs = [
        f"def {name}(x, bad):",
        "    if bad:",
        '        raise ValueError("planted user error")  # @may-break',
        "    return x.exp()",
        _compiled(name, name, backend, fullgraph, "None"),
    ]
    seq = [rng.random() < 0.5 for _ in range(rng.randint(2, 4))]
    steps = [Step(f"c_{name}(torch.ones(4), {b})", planted={"user_raise": b}) for b in seq]
    return Situation(
        "user_raise",
        name,
        f"{name}.__code__",
        defs,
        steps,
        fullgraph=fullgraph,
        backend=backend,
        tags={"user_raise"},
    )


def break_situation(rng: random.Random, name: str, backend: str, fullgraph: bool) -> Situation:
    """One or two graph breaks of registry kinds in one function."""
    kinds = rng.sample(sorted(BREAKS), rng.randint(1, 2))
    defs: list[str] = []
    for kind in kinds:
        if BREAKS[kind][1] and BREAKS[kind][1] not in defs:
            defs.append(BREAKS[kind][1])
    defs += [f"def {name}(x):", "    y = x.sin()"]
    breaks = []
    for kind in kinds:
        breaks.append((kind, len(defs)))
        defs.append("    " + BREAKS[kind][0])
        defs.append("    y = y.cos() + 1")
    defs += ["    return y", _compiled(name, name, backend, fullgraph, "False")]
    seq = _variants(rng, ["torch.ones(4)", "torch.ones(6)", "-torch.ones(4)"], repeat=True)
    steps = [
        Step(f"c_{name}({v})", planted=p) for v, p in zip(seq, _plant(seq, "shape"), strict=True)
    ]
    for step in steps:  # -ones(4) and ones(4) differ only in data: a reuse, or another branch
        if step.call.endswith("(-torch.ones(4))") and step.planted.get("guard"):
            step.planted = {"data": True}
    tags = {f"break:{k}" for k in kinds}
    if fullgraph and rng.random() < 0.5:
        # suppress_errors does not suppress a graph break under fullgraph: still raised
        for step in steps:
            step.pre = ["torch._dynamo.config.suppress_errors = True"]
            step.post = ["torch._dynamo.config.suppress_errors = False"]
        tags.add("suppressed_fullgraph_break")
    return Situation(
        "break:" + "+".join(kinds),
        name,
        f"{name}.__code__",
        defs,
        steps,
        breaks=breaks,
        fullgraph=fullgraph,
        backend=backend,
        tags=tags,
    )


def dynamic_situation(rng: random.Random, name: str, backend: str, fullgraph: bool) -> Situation:
    """Declared and unbacked dynamism: ``mark_dynamic`` ranges, ``torch._check``, ``.item()``."""
    kind = rng.choice(["mark_dynamic", "torch_check", "unbacked"])
    if kind == "mark_dynamic":
        lo, hi = rng.choice([(2, 64), (3, 32), (2, 16)])
        defs = [
            f"def {name}(x):",
            "    return x.sum() * x.shape[0]",
            _compiled(name, name, backend, fullgraph, "None"),
        ]
        sizes = sorted(rng.sample(range(lo, hi + 1), rng.randint(2, 3)))
        steps = [
            Step(f"c_{name}(_dyn(torch.ones({n}), {lo}, {hi}))", planted={"declared": [lo, hi]})
            for n in sizes
        ]
        return Situation(
            "dynamic:mark_dynamic",
            name,
            f"{name}.__code__",
            defs,
            steps,
            fullgraph=fullgraph,
            backend=backend,
            tags={"mark_dynamic"},
        )
    if kind == "torch_check":
        defs = [
            f"def {name}(x):",
            "    n = x.shape[0]",
            "    torch._check(n >= 2)",
            "    return x * n",
            _compiled(name, name, backend, fullgraph, "True"),
        ]
        steps = [Step(f"c_{name}(torch.ones({n}))") for n in rng.sample([3, 5, 9, 17], 2)]
        return Situation(
            "dynamic:torch_check",
            name,
            f"{name}.__code__",
            defs,
            steps,
            fullgraph=fullgraph,
            backend=backend,
            tags={"torch_check"},
        )
    defs = [
        f"def {name}(x, t):",
        "    n = t.item()",
        "    torch._check(n >= 0)",
        "    torch._check(n <= 100)",
        "    return x * n",
        _compiled(name, name, backend, fullgraph, "None"),
    ]
    steps = [
        Step(f"c_{name}(torch.ones(4), torch.tensor({v}))") for v in rng.sample([1, 2, 7, 30], 2)
    ]
    return Situation(
        "dynamic:unbacked",
        name,
        f"{name}.__code__",
        defs,
        steps,
        fullgraph=fullgraph,
        backend=backend,
        config={"capture_scalar_outputs": True},
        tags={"unbacked"},
    )


def region_situation(rng: random.Random, name: str, backend: str, fullgraph: bool) -> Situation:
    """A nested compile region (``torch.compiler.nested_compile_region``) called 2 to 4
    times with alike inputs in one function: one traced region, the other calls reuses."""
    uses = rng.randint(2, 4)
    region = f"region_{name}"
    body = " + ".join(f"{region}(x * {i + 1})" for i in range(uses))
    defs = [
        "@torch.compiler.nested_compile_region",
        f"def {region}(x):",
        "    return x.sin() * 3",
        f"def {name}(x):",
        f"    return {body}",
        _compiled(name, name, backend, fullgraph, "False"),
    ]
    seq = _variants(rng, ["torch.ones(4)", "torch.ones(6)", "torch.ones(8)"])
    steps = [
        Step(f"c_{name}({v})", planted={**p, "region_calls": uses})
        for v, p in zip(seq, _plant(seq, "shape"), strict=True)
    ]
    return Situation(
        "region",
        name,
        f"{name}.__code__",
        defs,
        steps,
        fullgraph=fullgraph,
        backend=backend,
        tags={"nested_compile_region"},
    )


def stance_situation(rng: random.Random, name: str, backend: str, fullgraph: bool) -> Situation:
    """A stance that runs a call eagerly instead of compiling: ``force_eager`` (any call),
    ``eager_on_recompile`` (a call that needs a new version); torch logs nothing for it, so
    no version, no recompile and no failed compile may be published for it."""
    stance = rng.choice(["force_eager", "eager_on_recompile"])
    on = f'torch.compiler.set_stance("{stance}")'
    off = 'torch.compiler.set_stance("default")'

    def eager(call: str) -> Step:
        if rng.random() < 0.5:  # the stance as a context manager, or set and set back
            return Step(call, ctx=on, planted={"stance": stance})
        return Step(call, pre=[on], post=[off], planted={"stance": stance})

    defs = [
        f"def {name}(x):",
        "    return x.tan() + 1",
        _compiled(name, name, backend, fullgraph, "False"),
    ]
    steps = [Step(f"c_{name}(torch.ones(4))")]
    if stance == "force_eager" and rng.random() < 0.5:
        steps.insert(0, eager(f"c_{name}(torch.ones(4))"))  # before any compile
    steps.append(eager(f"c_{name}(torch.ones(6))"))
    if rng.random() < 0.6:  # the stance gone: the new shape compiles now
        steps.append(Step(f"c_{name}(torch.ones(6))", planted={"guard": "shape"}))
    return Situation(
        f"stance:{stance}",
        name,
        f"{name}.__code__",
        defs,
        steps,
        fullgraph=fullgraph,
        backend=backend,
        tags={f"stance_{stance}"},
    )


#: Builders and their weights in a program.
BUILDERS: list[tuple[Builder, int]] = [
    (guard_situation, 8),
    (limit_situation, 2),
    (error_on_recompile_situation, 1),
    (backend_error_situation, 1),
    (user_raise_situation, 1),
    (break_situation, 3),
    (dynamic_situation, 2),
    (region_situation, 1),
    (stance_situation, 1),
]
