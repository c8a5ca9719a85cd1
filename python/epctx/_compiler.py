"""ModelCompiler, as onnxruntime's: compile an original model into a context model and blob."""

import os

from . import _epctx


def _default_output_path(model_path):
    """onnxruntime's rule: model.onnx -> model_ctx.onnx."""
    root, ext = os.path.splitext(model_path)
    return (root if ext == ".onnx" else model_path) + "_ctx.onnx"


class ModelCompiler:
    """Compiles one original model.

    sess_options: SessionOptions with the ep.* entries of the compile; with
        ep.share_ep_contexts=1 the model joins the process's shared blob, written by the compile
        whose options also set ep.stop_share_ep_contexts=1.
    input_model_path_or_bytes: a path, or the model's bytes (such a context model records no
        original model to fall back to).
    embed_compiled_data_into_model: True puts the blob inside the context model
        (ep.context_embed_mode=1).

    The remaining onnxruntime parameters are accepted at their defaults only: epctx stores every
    initializer in the blob (no external initializers file), always optimizes, and has no compile
    flags.
    """

    def __init__(self, sess_options, input_model_path_or_bytes, embed_compiled_data_into_model=False,
                 external_initializers_file_path=None, external_initializers_size_threshold=1024,
                 flags=0, graph_optimization_level=None, get_initializer_location_func=None):
        if external_initializers_file_path is not None or get_initializer_location_func is not None:
            raise _epctx.Unsupported(
                "epctx stores every initializer in the context blob: external initializer files "
                "are not supported")
        if flags:
            raise _epctx.Unsupported(f"epctx has no compile flags (got {flags!r})")
        if graph_optimization_level is not None:
            raise _epctx.Unsupported("epctx always optimizes; graph_optimization_level must be None")
        del external_initializers_size_threshold  # only meaningful with an external file
        options = _epctx.SessionOptions() if sess_options is None else sess_options
        if not isinstance(options, _epctx.SessionOptions):
            raise TypeError(f"sess_options must be an epctx.SessionOptions, got {type(options).__name__}")
        self._options = options.__copy__()
        self._options.add_session_config_entry("ep.context_embed_mode",
                                               "1" if embed_compiled_data_into_model else "0")
        if isinstance(input_model_path_or_bytes, (str, os.PathLike)):
            self._model = os.fspath(input_model_path_or_bytes)
        elif isinstance(input_model_path_or_bytes, bytes):
            self._model = input_model_path_or_bytes
        else:
            raise TypeError(f"Unable to load from type '{type(input_model_path_or_bytes)}'")

    def compile_to_file(self, output_model_path=None):
        """Writes the context model to output_model_path (default: the input's path with .onnx
        replaced by _ctx.onnx) and its blob beside it."""
        if output_model_path is None:
            if isinstance(self._model, bytes):
                raise _epctx.InvalidArgument(
                    "output_model_path is required when the input model is given as bytes")
            output_model_path = _default_output_path(self._model)
        _epctx._compile_to_file(self._options, self._model, os.fspath(output_model_path))

    def compile_to_bytes(self):
        """Returns the context model's bytes. The blob is embedded when
        embed_compiled_data_into_model is True; otherwise it is written beside the path given by
        the entry ep.context_file_path (where the caller will save the bytes)."""
        return _epctx._compile_to_bytes(self._options, self._model)

    def compile_to_stream(self, write_function):
        """Calls write_function(bytes) with the context model's bytes (in one piece)."""
        write_function(self.compile_to_bytes())
