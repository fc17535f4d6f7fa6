"""A program from a seed: a few situations (:mod:`.grammar`), their calls interleaved.

The program is plain Python a reader can run alone.  Its harness prints one ``@@CALL``
JSON line per call, from the program's side: the versions torch added to the function's
cache (``torch._dynamo``'s own cache entries of the code object), the frames it tried, the
recompile-limit refusals it counted, the exception the call raised.  :class:`Program`
keeps what the generator planted, per call and per graph-break line.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from .grammar import BUILDERS, Situation, Step

HARNESS = '''\
import json
import threading
import torch
from torch._dynamo.utils import counters
from torch._dynamo.callback import callback_handler
from torch._dynamo.eval_frame import _debug_get_cache_entry_list as _entries

_starts = [0]  # compiles torch started (any frame: the function's, its resume functions')


def _count_starts():
    callback_handler.register_start_callback(lambda *args: _starts.__setitem__(0, _starts[0] + 1))


_count_starts()


def _limit_hits():
    """Refusals torch counted: its 'recompile limit exceeded' entries."""
    return sum(n for k, n in counters["unimplemented"].items() if "recompile limit" in k.lower())


def _dyn(t, lo, hi):
    torch._dynamo.mark_dynamic(t, 0, min=lo, max=hi)
    return t


def _call(step, function, code, thunk, planted):
    before = len(_entries(code))
    frames, ok, hits = counters["frames"]["total"], counters["frames"]["ok"], _limit_hits()
    starts = _starts[0]
    raised = None
    try:
        thunk()
    except Exception as e:  # the truth: what the caller saw
        raised = type(e).__name__
    record = {
        "step": step,
        "function": function,
        "new_versions": len(_entries(code)) - before,
        "compiles": _starts[0] - starts,
        "frames": counters["frames"]["total"] - frames,
        "frames_ok": counters["frames"]["ok"] - ok,
        "refused": _limit_hits() - hits,
        "raised": raised,
        "planted": planted,
    }
    print("@@CALL " + json.dumps(record), flush=True)


def _threaded(thunk):
    """The call made from a thread of its own, its error raised to the caller."""
    box = []

    def run():
        try:
            thunk()
        except Exception as e:
            box.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if box:
        raise box[0]


def _reset(step):
    torch._dynamo.reset()  # clears the callbacks too
    _count_starts()
    print("@@RESET " + json.dumps({"step": step}), flush=True)
'''

#: Marks a planted graph break's line: ``# @break:<kind>``.
BREAK_MARK = "# @break:"
#: Marks a line torch may break at without the generator planting it (a ``raise``).
MAY_BREAK = "# @may-break"


@dataclass
class Program:
    seed: int
    index: int
    text: str
    situations: list[dict[str, Any]]  # kind, function, fullgraph, backend, tags
    #: Per call (step number): the situation's function and what it planted.
    planted: dict[int, dict[str, Any]] = field(default_factory=dict)
    breaks: list[tuple[str, str, int]] = field(default_factory=list)  # (function, kind, line)
    config: dict[str, Any] = field(default_factory=dict)
    resets: list[int] = field(default_factory=list)  # steps a reset comes before

    @property
    def tags(self) -> set[str]:
        return (
            {t for s in self.situations for t in s["tags"]}
            | {s["backend"] for s in self.situations}
            | ({"fullgraph"} if any(s["fullgraph"] for s in self.situations) else set())
            | ({"reset"} if self.resets else set())
            | ({"thread"} if any(p.get("thread") for p in self.planted.values()) else set())
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "index": self.index,
            "situations": self.situations,
            "planted": {str(k): v for k, v in self.planted.items()},
            "breaks": self.breaks,
            "config": self.config,
            "resets": self.resets,
        }


def _backend(rng: random.Random, inductor_share: float) -> str:
    r = rng.random()
    if r < inductor_share:
        return "inductor"
    return "aot_eager" if r < inductor_share + 0.3 else "eager"


def generate(seed: int, index: int, inductor_share: float = 0.05) -> Program:
    """Program ``index`` of campaign ``seed``: the same text and truth on every machine."""
    rng = random.Random(f"{seed}/{index}")
    builders = [b for b, _ in BUILDERS]
    weights = [w for _, w in BUILDERS]
    situations: list[Situation] = []
    config: dict[str, Any] = {}
    used_module = False
    for i in range(rng.choice([1, 2, 2, 3])):
        for _ in range(10):  # one recompile limit and one module per program
            build = rng.choices(builders, weights)[0]
            s = build(rng, f"f{i}", _backend(rng, inductor_share), rng.random() < 0.25)
            limits = {"recompile_limit", "cache_size_limit"}
            if limits & set(s.config) and limits & set(config):
                continue
            if s.function == "forward" and used_module:
                continue
            break
        used_module |= s.function == "forward"
        config.update(s.config)
        situations.append(s)
    lines = [f"# generated program {seed}/{index}", *HARNESS.splitlines()]
    for key, value in sorted(config.items()):
        lines.append(f"torch._dynamo.config.{key} = {value!r}")
    breaks_at: list[tuple[str, str, int]] = []
    for s in situations:
        lines.append("")
        start = len(lines)
        lines.extend(s.defs)
        for kind, offset in s.breaks:
            lines[start + offset] += f"  {BREAK_MARK}{kind}"
            breaks_at.append((s.function, kind, start + offset + 1))
    lines.append("")
    queues = [list(s.steps) for s in situations]
    planted: dict[int, dict[str, Any]] = {}
    resets: list[int] = []
    step = 0
    while any(queues):
        i = rng.choice([k for k, q in enumerate(queues) if q])
        st: Step = queues[i].pop(0)
        s = situations[i]
        if step and rng.random() < 0.06:
            lines.append(f"_reset({step})")
            resets.append(step)
        lines.extend(st.pre)
        # a call from a thread of its own (not one under a ``with``: grad mode and autocast
        # are the thread's own, so the change would not reach it; nor where the program
        # sets torch._dynamo.config: in torch 2.13 a setting made in the main thread does
        # not reach another, so what was planted, a captured .item() say, would not hold)
        thread = st.thread or (st.ctx is None and rng.random() < 0.12)
        if thread and (config or any("torch._dynamo.config" in line for line in st.pre)):
            thread = False
        thunk = f"_threaded(lambda: {st.call})" if thread else st.call
        call = (
            f"_call({step}, {s.function!r}, {s.code}, lambda: {thunk}, "
            f"json.loads({json.dumps(st.planted)!r}))"
        )
        lines += [f"with {st.ctx}:", f"    {call}"] if st.ctx else [call]
        lines.extend(st.post)
        planted[step] = {"situation": i, "function": s.function, **st.planted}
        if thread:
            planted[step]["thread"] = True
        step += 1
    text = "\n".join(lines) + "\n"
    return Program(
        seed,
        index,
        text,
        [
            {
                "kind": s.kind,
                "function": s.function,
                "fullgraph": s.fullgraph,
                "backend": s.backend,
                "tags": sorted(s.tags),
            }
            for s in situations
        ],
        planted,
        breaks_at,
        config,
        resets,
    )
