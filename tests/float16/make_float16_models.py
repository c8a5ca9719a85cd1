#!/usr/bin/python3
"""Writes float16 models as GPU-oriented exports ship them (tests/models/convert_float16.py: every
weight and activation float16, float32 graph inputs and outputs behind Casts), for
check_real_models.py --list tests/float16/models.json (epctx against ONNX Runtime):

  f16_cnn.onnx             a small CNN (Conv, BatchNormalization, Relu, MaxPool, a residual Add,
                           GlobalAveragePool, Gemm), exported by PyTorch
  f16_cnn_io16.onnx        the same with float16 graph inputs and outputs
  f16_bert_tiny.onnx       tests/models/export_transformers.py's bert_tiny
  f16_llama_prefill.onnx,  tests/models/export_llama.py --config tiny
  f16_llama_decode.onnx

usage: make_float16_models.py --out DIR
"""

import argparse
import os
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(HERE), "models")


def export_cnn(path):
    import torch

    torch.manual_seed(8101)

    class Cnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.bn1 = torch.nn.BatchNorm2d(16)
            self.conv2 = torch.nn.Conv2d(16, 16, 3, padding=1)
            self.conv3 = torch.nn.Conv2d(16, 32, 1)
            self.fc = torch.nn.Linear(32, 10)

        def forward(self, x):
            x = torch.relu(self.bn1(self.conv1(x)))
            x = torch.nn.functional.max_pool2d(x, 2)
            x = torch.relu(self.conv2(x) + x)
            x = torch.relu(self.conv3(x))
            return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))

    model = Cnn().eval()
    with torch.no_grad():
        model.bn1.running_mean.uniform_(-0.5, 0.5)
        model.bn1.running_var.uniform_(0.5, 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(1, 3, 32, 32),), path, opset_version=17,
                          input_names=["input"], output_names=["output"])


def run(*args):
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    out = os.path.abspath(args.out)
    work = os.path.join(out, "float32")
    os.makedirs(work, exist_ok=True)
    convert = os.path.join(MODELS, "convert_float16.py")

    export_cnn(os.path.join(work, "cnn.onnx"))
    run(convert, os.path.join(work, "cnn.onnx"), os.path.join(out, "f16_cnn.onnx"))
    run(convert, os.path.join(work, "cnn.onnx"), os.path.join(out, "f16_cnn_io16.onnx"),
        "--all-float16-io")

    run(os.path.join(MODELS, "export_transformers.py"), "--out", work, "--models", "bert_tiny",
        "--quiet")
    run(convert, os.path.join(work, "bert_tiny.onnx"), os.path.join(out, "f16_bert_tiny.onnx"))

    run(os.path.join(MODELS, "export_llama.py"), "--config", "tiny", "--out", work)
    for stem in ("prefill", "decode"):
        run(convert, os.path.join(work, f"llama_tiny_{stem}.onnx"),
            os.path.join(out, f"f16_llama_{stem}.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
