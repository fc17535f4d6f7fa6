"""What a failed guard checks, in plain words: the pages' sentence for each kind of
check the model tells apart (:data:`~..trace.analyses.guards.GUARD_KINDS`)."""

from __future__ import annotations

#: Each kind of check, as a reader is told why a function compiled again.
GUARD_WORDS: dict[str, str] = {
    "shape": "an input tensor has a different shape",
    "dtype": "an input tensor has a different data type (dtype)",
    "dimensions": "an input tensor has a different number of dimensions",
    "strides": "an input tensor has a different memory layout (strides)",
    "device": "an input tensor is on a different device",
    "device_keys": "an input tensor is on a different device (its dispatch keys name another "
    "backend)",
    "requires_grad": "an input tensor's requires_grad flag changed",
    "dispatch_keys": "a tensor's dispatch keys changed (for example grad mode or autocast)",
    "global_state": "a global setting torch checks changed (the guard names which)",
    "grad_mode": "grad mode changed (torch.no_grad or enable_grad)",
    "default_dtype": "the default dtype changed (torch.set_default_dtype)",
    "autocast": "autocast changed",
    "deterministic": "the deterministic-algorithms setting changed",
    "matmul_precision": "a matmul precision setting changed (TF32 or reduced-precision reductions)",
    "num_threads": "the number of threads changed (torch.set_num_threads)",
    "torch_function": "the torch function mode changed",
    "object": "a different Python object was passed",
    "type": "an input has a different Python type",
    "length": "a list or tuple has a different length",
    "dict_keys": "a dict has other keys",
    "dict_version": "a dict or module attribute was modified",
    "closure": "a variable of an enclosing function (a closure cell) has a new value",
    "global": "a global variable has a new value",
    "module_attribute": "an attribute of the module (self) has a new value",
    "attribute": "an attribute of an argument has a new value",
    "item": "an element of a list, tuple or dict the code reads has a new value",
    "size_range": "an input size is outside the range the compiled code assumed",
    "declared_range": "an input size is outside the range declared for it (mark_dynamic min/max)",
    "guard_raised": "the guard could not be evaluated: reading its source raised an error "
    "(no check failed)",
    "value": "a Python value the code was specialized on has a new value (a name the frame "
    "reads: an argument, a local or a variable of an enclosing function)",
    "other": "a check recorded at compile time (a guard) no longer holds",
}


def guard_words(kind: str) -> str:
    """The words for one kind of check (a kind of a newer model: the general words)."""
    return GUARD_WORDS.get(kind, GUARD_WORDS["other"])
