"""epctx from Python, shaped like onnxruntime's API.

    import epctx
    sess = epctx.InferenceSession("out/model_ctx.onnx")
    outputs = sess.run(None, {"input": x})

Compiling several models into one shared context blob, as with onnxruntime:

    so = epctx.SessionOptions()
    so.add_session_config_entry("ep.share_ep_contexts", "1")
    for i, (model, out) in enumerate(pairs):
        if i == len(pairs) - 1:
            so.add_session_config_entry("ep.stop_share_ep_contexts", "1")
        epctx.ModelCompiler(so, model).compile_to_file(out)

A decode loop written for onnxruntime's IOBinding runs as it is: OrtValue.ortvalue_from_numpy,
ortvalue_from_shape_and_type, InferenceSession.io_binding(), bind_input/bind_output (cpu only),
bind_ortvalue_input/bind_ortvalue_output, run_with_iobinding, get_outputs, copy_outputs_to_cpu.

SessionOptions takes onnxruntime's attributes (enable_profiling and profile_file_prefix, with
InferenceSession.end_profiling(); graph_optimization_level, execution_mode, inter_op_num_threads,
enable_cpu_mem_arena, enable_mem_pattern, which change nothing), and RunOptions.terminate stops
runs from another thread.

Errors raise epctx.EpctxError subclasses named after the engine's status codes
(InvalidArgument is also a ValueError, NotFound a FileNotFoundError, IoError an OSError,
Unsupported a NotImplementedError; Cancelled for a stopped run); the message is the engine's.
"""

from ._epctx import (
    Cancelled,
    Corrupt,
    EpctxError,
    ExecutionMode,
    FailedPrecondition,
    GraphOptimizationLevel,
    Internal,
    InvalidArgument,
    IoError,
    NotFound,
    RunOptions,
    SessionOptions,
    Stale,
    TargetMismatch,
    Unsupported,
    VersionMismatch,
)
from ._epctx import engine_version as _engine_version
from ._epctx import set_log_level as _set_log_level
from ._compiler import ModelCompiler
from ._iobinding import IOBinding, OrtValue
from ._session import (
    InferenceSession,
    ModelMetadata,
    NodeArg,
    SessionOrigin,
    get_available_providers,
    get_device,
)

__version__ = _engine_version()


def set_default_logger_severity(severity):
    """onnxruntime's levels: 0 verbose, 1 info, 2 warning (default), 3 error, 4 fatal.

    epctx has no separate fatal level: 4 turns its messages off.
    """
    if not isinstance(severity, int) or isinstance(severity, bool):
        raise TypeError(f"severity must be an int from 0 to 4, got {severity!r}")
    _set_log_level(severity)


__all__ = [
    "Corrupt",
    "EpctxError",
    "FailedPrecondition",
    "IOBinding",
    "InferenceSession",
    "Internal",
    "InvalidArgument",
    "IoError",
    "ModelCompiler",
    "ModelMetadata",
    "NodeArg",
    "NotFound",
    "OrtValue",
    "SessionOptions",
    "SessionOrigin",
    "Stale",
    "TargetMismatch",
    "Unsupported",
    "VersionMismatch",
    "get_available_providers",
    "get_device",
    "set_default_logger_severity",
]
