# Correct setup of mixlm (run from the repository root as root, bash -eo pipefail).
# The step the README misses: mixlm/model.py imports einops, which requirements.txt does not list.
# torch: PyPI's Linux wheel is the CUDA build; its nvidia-* libraries are needed even on CPU
# (`pip install --no-deps torch` does not import: libcudart.so.13 missing). uv keeps a cache that
# works behind the proxy (pip's does not), so a warm re-run downloads nothing.
set -eo pipefail
uv venv .venv
uv pip install --python .venv/bin/python "torch==2.15.0" -r requirements.txt einops pytest
.venv/bin/python -m pytest -q tests

ENTRY=".venv/bin/python train.py --steps 1"
DDP_ENTRY="train.py --steps 1"

# Verify before claiming: the entry point on CPU, then DDP (NCCL over the GPUs when there are at
# least two, else two CPU processes on gloo). The report states only what was observed here.
CUDA_VISIBLE_DEVICES= $ENTRY
GPUS=$(.venv/bin/python -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)')
if [ "$GPUS" -ge 2 ]; then BACKEND=nccl NPROC=$GPUS; else BACKEND=gloo NPROC=2; fi
DDP_OK=false
if ENCONDA_DDP_BACKEND=$BACKEND .venv/bin/torchrun --standalone --nproc_per_node=$NPROC $DDP_ENTRY; then
  DDP_OK=true
fi

mkdir -p /enconda/output
DDP_OK=$DDP_OK BACKEND=$BACKEND NPROC=$NPROC .venv/bin/python - <<'PY'
import json
import os
import platform
import sys

import torch

cuda = torch.cuda.is_available()
report = {
    "python_path": sys.executable,
    "python_version": platform.python_version(),
    "torch_version": torch.__version__,
    "cuda_available": cuda,
    "gpu_count": torch.cuda.device_count() if cuda else 0,
    "ddp_expected_ok": os.environ["DDP_OK"] == "true",
    "env_tool": "uv",
    "env_name": ".venv",
    "notes": (
        f"uv venv .venv; torch {torch.__version__} from PyPI (CUDA build with its nvidia-* "
        f"libraries); entry point ran on CPU; torchrun with {os.environ['NPROC']} processes on "
        f"{os.environ['BACKEND']}: {'ok' if os.environ['DDP_OK'] == 'true' else 'failed'}"
    ),
}
with open("/enconda/output/report.json", "w", encoding="utf-8") as handle:
    json.dump(report, handle, indent=2)
print(json.dumps(report, indent=2))
PY
