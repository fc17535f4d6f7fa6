"""Autotuning on CPU: an eval-mode MLP compiled with ``mode="max-autotune"`` and inductor
``freezing``, so each Linear is a ``packed_linear`` template benchmarked against MKL
(``packed_linear_template_precompiling`` / ``_autotuning`` spans, the choices' stats logged
because ``max_autotune_report_choices_stats`` is on); then a function whose matmul of two
inputs is not autotuned, for contrast."""
import torch
import torch._inductor.config as inductor_config

inductor_config.max_autotune_gemm_backends = "CPP,ATEN"
inductor_config.freezing = True
inductor_config.max_autotune_report_choices_stats = True
torch.manual_seed(0)

mlp = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 128)
).eval()
compiled_mlp = torch.compile(mlp, mode="max-autotune")


def product(a, b):
    return (a @ b).relu()


compiled_product = torch.compile(product, mode="max-autotune")
with torch.no_grad():
    print(compiled_mlp(torch.randn(64, 256)).shape)
    print(compiled_product(torch.randn(128, 256), torch.randn(256, 64)).shape)
print("OK")
