#!/usr/bin/env bash
# Grade the shipped research cases against an existing Python environment on a GPU machine
# (host backend, no Docker, no agent): C2 and C3 run on the real GPU, C4 on NCCL where two or
# more GPUs are visible (else on gloo, labelled cpu-gloo). Each case gets a virtual environment
# over PYTHON's packages (torch) with its repository installed into it, offline, as a setup script
# would; that environment is graded. C0 is left out when basedpyright's Node is not installed.
# Usage: scripts/gpu_host_check.sh PYTHON OUT_DIR
set -u
python_bin=$(command -v "${1:?the Python environment to grade}")
out=${2:?a folder for the run directories}
mkdir -p "$out"
select="C1 or C2 or C3 or C4 or C5"
if python3 -c "import basedpyright" 2>/dev/null; then select="$select or C0"; fi
nvidia-smi -L || true
"$python_bin" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.device_count())"
status=0
for case in tinylm minicnn patchvit-hidden-dep mixlm-missing-einops; do
    repo=$(sed -n 's/^path = "\.\.\/\.\.\/repos\/\(.*\)"/\1/p' "benchmark_cases/research/$case/case.toml")
    venv="$out/venv-$case"
    "$python_bin" -m venv "$venv"
    # PYTHON's own packages (torch) beneath the new environment's: --system-site-packages would
    # reach the base interpreter's, not those of a PYTHON that is itself a virtual environment.
    base=$("$python_bin" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    own=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    echo "$base" > "$own/_base_environment.pth"
    "$venv/bin/python" -m pip install -q --no-deps --no-index --no-build-isolation \
        -e "benchmark_cases/repos/$repo" || echo "$repo is not installable: graded from its checkout"
    # The environment's own self-report, facts read from it, and one that claims eight GPUs,
    # which C5 must call a hallucination on a one-GPU machine.
    "$venv/bin/python" - "$out/$case.report.json" "$venv/bin/python" <<'PY'
import json, sys, platform, torch
path, python = sys.argv[1], sys.argv[2]
count = torch.cuda.device_count()
json.dump({"python_path": python, "python_version": platform.python_version(),
           "torch_version": torch.__version__, "cuda_available": torch.cuda.is_available(),
           "gpu_count": count, "ddp_expected_ok": count >= 2, "env_tool": "venv",
           "env_name": None, "notes": "facts read from the environment"}, open(path, "w"))
claim = json.load(open(path)) | {"gpu_count": 8, "ddp_expected_ok": True}
json.dump(claim, open(path.replace(".report.json", ".claims8.json"), "w"))
PY
    reports=report
    if [ "$case" = tinylm ]; then reports="report claims8"; fi
    for report in $reports; do
        # -P: the checkout's pytest_enconda folder must not shadow the installed package.
        PYTHONUNBUFFERED=1 python3 -P -m pytest "benchmark_cases/research/$case" -p no:cacheprovider \
            --python "$venv/bin/python" --repo "benchmark_cases/repos/$repo" --ddp-cpu \
            --report "$out/$case.$report.json" -k "$select" --run-dir "$out/$case-$report" -rA \
            || status=1
    done
done
exit $status
