"""Scenario `failures_raised_suppressed`: the same kinds of compile failures once RAISED to the
caller (`torch._dynamo.config.suppress_errors = False`, the default; the program catches each
exception) and once SUPPRESSED (`suppress_errors = True`: Dynamo logs the failure and runs the
frame eagerly, so the call returns a value unless eager itself fails).  Every call prints one
`EVENT <what> fn=<function> ...` line (stored as program-output.txt beside the log); the
functions are called in this order, each a distinct code object (its own frame id):

suppress_errors=False (raised):
  raised_backend      custom backend `failing_backend` raises -> BackendCompilerFailed raised
  raised_shape        fake-tensor shape error (x @ wrong-size ones), fullgraph=False
                      -> TorchRuntimeError raised
  raised_no_fake      custom op `corpus::scaled` with no fake kernel -> TorchRuntimeError raised
  raised_user_error   `raise ValueError` in the function body under compile -> the caller gets
                      the user's own ValueError (see the log for what Dynamo records)
  raised_internal     attribute access on an object whose `__dict__` property raises KeyError
                      while Dynamo inspects it -> InternalTorchDynamoError raised
suppress_errors=True (suppressed):
  suppressed_backend     the same failing backend -> eager fallback, returns a value
  suppressed_shape       the same shape error -> Dynamo suppresses, but eager then runs the bad
                         matmul and raises a plain RuntimeError (caught; `EVENT raised-eager`)
  suppressed_no_fake     the same custom op -> eager fallback, returns a value
  suppressed_user_error  the same ValueError -> eager runs the body and raises ValueError
                         (caught; `EVENT raised-eager`)
  suppressed_internal    the same KeyError inside Dynamo -> eager fallback, returns a value
  fullgraph_break_suppressed  fullgraph=True + graph_break() with suppress_errors=True
                         (whether fullgraph errors are suppressed is printed)
suppress_errors=False again:
  retry_matmul        x @ w: first call with mismatched shapes -> TorchRuntimeError raised
                      (a failed compile), then called again with matching shapes -> compiles
                      fine, then a third call with the same shapes reuses that graph
  fullgraph_break     fullgraph=True + torch._dynamo.graph_break() -> Unsupported raised
  graph_break_ok      fullgraph=False + graph_break() -> two graphs, returns a value
  ok_last             a plain function that compiles fine
"""
import torch

torch.manual_seed(0)


def event(what, fn, **kw):
    extra = "".join(f" {k}={v}" for k, v in kw.items())
    print(f"EVENT {what} fn={fn}{extra}", flush=True)


def call(fn, *args, compiled):
    """Call `compiled(*args)` and print what happened to the caller."""
    try:
        out = compiled(*args)
    except torch._dynamo.exc.TorchDynamoException as e:
        event("raised", fn.__name__, exc=type(e).__name__)
        return None
    except Exception as e:  # the user's own error, or eager's after a suppressed failure
        tag = "raised-eager" if torch._dynamo.config.suppress_errors else "raised"
        event(tag, fn.__name__, exc=type(e).__name__)
        return None
    event("ok", fn.__name__, out=tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__)
    return out


def failing_backend(gm, example_inputs):
    raise RuntimeError("failing_backend refuses every graph")


@torch.library.custom_op("corpus::scaled", mutates_args=())
def scaled(x: torch.Tensor) -> torch.Tensor:  # no register_fake: fake tensors cannot run it
    return x * 3


class Opaque:
    """Dynamo reads the instance `__dict__` when it inspects the object; ours raises KeyError
    (eager never asks for it: `offset` is a class attribute)."""

    offset = 1.5

    @property
    def __dict__(self):
        raise KeyError("__dict__ is not available")


opaque = Opaque()


# ---- raised (suppress_errors=False) ----
def raised_backend(x):
    return torch.sin(x) + 1


def raised_shape(x):
    y = x.relu()
    return y @ torch.ones(x.shape[0] + 1, 2)


def raised_no_fake(x):
    return scaled(x.cos()) + 1


def raised_user_error(x):
    y = x * 2
    if y.shape[0] == 4:
        raise ValueError("raised_user_error: batch of 4 is not allowed")
    return y


def raised_internal(x):
    return x + opaque.offset


# ---- suppressed (suppress_errors=True) ----
def suppressed_backend(x):
    return torch.sin(x) + 1


def suppressed_shape(x):
    y = x.relu()
    return y @ torch.ones(x.shape[0] + 1, 2)


def suppressed_no_fake(x):
    return scaled(x.cos()) + 1


def suppressed_user_error(x):
    y = x * 2
    if y.shape[0] == 4:
        raise ValueError("suppressed_user_error: batch of 4 is not allowed")
    return y


def suppressed_internal(x):
    return x + opaque.offset


def fullgraph_break_suppressed(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2


# ---- after: a failed compile compiled again, fullgraph contrast ----
def retry_matmul(x, w):
    return (x @ w).tanh()


def fullgraph_break(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2


def graph_break_ok(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2


def ok_last(x):
    return torch.softmax(x, -1).sum(0)


x = torch.randn(4, 4)
print("suppress_errors =", torch._dynamo.config.suppress_errors, flush=True)
call(raised_backend, x, compiled=torch.compile(raised_backend, backend=failing_backend))
call(raised_shape, x, compiled=torch.compile(raised_shape))
call(raised_no_fake, x, compiled=torch.compile(raised_no_fake))
call(raised_user_error, x, compiled=torch.compile(raised_user_error))
call(raised_internal, x, compiled=torch.compile(raised_internal))

torch._dynamo.config.suppress_errors = True
print("suppress_errors =", torch._dynamo.config.suppress_errors, flush=True)
call(suppressed_backend, x, compiled=torch.compile(suppressed_backend, backend=failing_backend))
call(suppressed_shape, x, compiled=torch.compile(suppressed_shape))
call(suppressed_no_fake, x, compiled=torch.compile(suppressed_no_fake))
call(suppressed_user_error, x, compiled=torch.compile(suppressed_user_error))
call(suppressed_internal, x, compiled=torch.compile(suppressed_internal))
call(fullgraph_break_suppressed, x, compiled=torch.compile(fullgraph_break_suppressed, fullgraph=True))

torch._dynamo.config.suppress_errors = False
print("suppress_errors =", torch._dynamo.config.suppress_errors, flush=True)
retry = torch.compile(retry_matmul, backend="aot_eager")
call(retry_matmul, x, torch.randn(5, 3), compiled=retry)  # first compile fails: 4x4 @ 5x3
call(retry_matmul, x, torch.randn(4, 3), compiled=retry)  # other inputs: compiles fine
call(retry_matmul, x, torch.randn(4, 3), compiled=retry)  # same shapes: cached graph
call(fullgraph_break, x, compiled=torch.compile(fullgraph_break, fullgraph=True))
call(graph_break_ok, x, compiled=torch.compile(graph_break_ok, backend="aot_eager"))
call(ok_last, x, compiled=torch.compile(ok_last))
print("done", flush=True)
