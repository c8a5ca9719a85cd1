"""InferenceSession and the objects it describes itself with, as onnxruntime names them."""

import copy
import os
import time

from . import _epctx
from ._iobinding import IOBinding, OrtValue

_CPU = "CPUExecutionProvider"


def get_available_providers():
    """epctx runs on the CPU only."""
    return [_CPU]


def get_device():
    return "CPU"


def _check_providers(providers, provider_options):
    """Accepts None or the CPU provider (by name or as (name, {}) ), refuses anything else."""
    if providers is None:
        if provider_options is not None:
            raise ValueError("provider_options given without providers")
        return
    if isinstance(providers, str) or not isinstance(providers, (list, tuple)):
        raise ValueError("'providers' should be a sequence of provider names or (name, options) tuples")
    if provider_options is not None and len(provider_options) != len(providers):
        raise ValueError("'providers' and 'provider_options' should be the same length if both are given")
    for i, provider in enumerate(providers):
        options = provider_options[i] if provider_options is not None else {}
        if isinstance(provider, tuple) and len(provider) == 2:
            provider, options = provider
        if provider != _CPU:
            raise ValueError(
                f"provider {provider!r} is not available: epctx runs on the CPU only "
                f"(available: {get_available_providers()})")
        if options:
            raise _epctx.Unsupported(
                f"{_CPU} options are not supported by epctx (got {dict(options)!r}); "
                "use SessionOptions entries instead")


def _run_options(run_options):
    """None or an epctx.RunOptions, as the engine takes it."""
    if run_options is not None and not isinstance(run_options, _epctx.RunOptions):
        raise TypeError(f"run_options must be an epctx.RunOptions or None, got {type(run_options).__name__}")
    return run_options


def _with_profile_file(sess_options):
    """With enable_profiling and no epctx.profile_file entry: a copy of the options naming the
    file as onnxruntime does, PREFIX_YYYY-MM-DD_HH-MM-SS.json in the working directory."""
    if not sess_options.enable_profiling:
        return sess_options
    try:
        sess_options.get_session_config_entry("epctx.profile_file")
        return sess_options
    except _epctx.NotFound:
        pass
    named = copy.copy(sess_options)
    stamp = time.strftime("%Y-%m-%d_%H-%M-%S")
    named.add_session_config_entry("epctx.profile_file", f"{sess_options.profile_file_prefix}_{stamp}.json")
    return named


def _output_names(output_names):
    if isinstance(output_names, (str, bytes)):
        raise TypeError("output_names must be a list of output names or None")
    return list(output_names) if output_names else []


def _native_feed(feed):
    """OrtValues in a feed go to the engine as they are (no conversion, no copy)."""
    return {name: value._get_c_value() if isinstance(value, OrtValue) else value
            for name, value in feed.items()}


class NodeArg:
    """One model input or output: name, shape (ints; a str for a symbolic dim, None for an
    unnamed open one; [] for a sequence) and type ('tensor(float)', 'tensor(string)',
    'seq(tensor(float))', 'optional(tensor(float))', ...)."""

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class ModelMetadata:
    """The ModelProto's fields of the file the session was created from."""

    def __init__(self, fields):
        self.producer_name = fields["producer_name"]
        self.graph_name = fields["graph_name"]
        self.domain = fields["domain"]
        self.description = fields["description"]
        self.graph_description = fields["graph_description"]
        self.version = fields["version"]
        self.custom_metadata_map = dict(fields["custom_metadata_map"])

    def __repr__(self):
        return (f"ModelMetadata(producer_name={self.producer_name!r}, "
                f"graph_name={self.graph_name!r}, version={self.version})")


class SessionOrigin:
    """epctx's own: how the session came to be.

    from_context_blob: True when it runs from the context blob; False when it compiled the
        original model (given directly, or as the fallback).
    fallback_reason: why the blob was not used ('' when it was, or for an original model).
    context_model_path, blob_path, original_model_path: the files involved ('' when none).
    load_mode: how the blob file was brought into memory ('mmap', 'populate', 'prefetch' or
        'read': what epctx.load_mode=auto chose, when it was auto); '' without a blob file.
    """

    def __init__(self, fields):
        self.from_context_blob = fields["from_context_blob"]
        self.context_model_path = fields["context_model_path"]
        self.blob_path = fields["blob_path"]
        self.load_mode = fields["load_mode"]
        self.original_model_path = fields["original_model_path"]
        self.fallback_reason = fields["fallback_reason"]

    def __repr__(self):
        return (f"SessionOrigin(from_context_blob={self.from_context_blob}, "
                f"blob_path={self.blob_path!r}, load_mode={self.load_mode!r}, fallback_reason={self.fallback_reason!r})")


class InferenceSession:
    """A loaded model: a context model (NAME_ctx.onnx) or an original ONNX model.

    path_or_bytes: a path, or the model's bytes (for a context model whose blob is a file, set
        the entry ep.context_file_path to where the model would be on disk).
    sess_options: SessionOptions, or None for the defaults.
    providers: None or ['CPUExecutionProvider']; other providers are refused.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if kwargs:
            raise TypeError(f"InferenceSession got arguments epctx does not support: {sorted(kwargs)}")
        _check_providers(providers, provider_options)
        if sess_options is None:
            sess_options = _epctx.SessionOptions()
        elif not isinstance(sess_options, _epctx.SessionOptions):
            raise TypeError(f"sess_options must be an epctx.SessionOptions, got {type(sess_options).__name__}")
        engine_options = _with_profile_file(sess_options)
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
            self._sess = _epctx._Session.from_path(self._model_path, engine_options)
        elif isinstance(path_or_bytes, bytes):
            self._model_path = None
            self._sess = _epctx._Session.from_bytes(path_or_bytes, engine_options)
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        self._sess_options = copy.copy(sess_options)
        self._inputs = [NodeArg(n, t, s) for n, t, s in self._sess.inputs]
        self._outputs = [NodeArg(n, t, s) for n, t, s in self._sess.outputs]
        self._model_meta = ModelMetadata(self._sess.metadata)

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model: output_names (None or [] = all, in model order), input_feed
        {input name: numpy array}. Returns a list of numpy arrays, which own the engine's
        buffers (no copy).

        As in onnxruntime: string tensors are given as '<U' arrays or object arrays of str (or
        bytes) and returned as object arrays of str; a sequence is a list of arrays both ways;
        an empty optional is None both ways (an optional input left out of the feed is None).
        """
        run_options = _run_options(run_options)
        if not isinstance(input_feed, dict):
            raise TypeError(f"input_feed must be a dict of input name -> array, got {type(input_feed).__name__}")
        return self._sess.run(_output_names(output_names), _native_feed(input_feed), run_options)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """run() with OrtValues: input_dict_ort_values {input name: OrtValue} (arrays are taken
        too); returns a list of OrtValues, each over the engine's memory for its output."""
        run_options = _run_options(run_options)
        if not isinstance(input_dict_ort_values, dict):
            raise TypeError("input_dict_ort_values must be a dict of input name -> OrtValue, "
                            f"got {type(input_dict_ort_values).__name__}")
        values = self._sess.run_with_ort_values(_output_names(output_names),
                                                _native_feed(input_dict_ort_values), run_options)
        return [OrtValue(v) for v in values]

    def io_binding(self):
        """An IOBinding of this session, for run_with_iobinding."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the inputs and outputs `iobinding` holds; its get_outputs() then has the
        outputs. Outputs bound to OrtValues are written into their memory."""
        run_options = _run_options(run_options)
        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            raise ValueError("run_with_iobinding takes an IOBinding made by this session's io_binding()")
        iobinding._run(run_options)

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_modelmeta(self):
        return self._model_meta

    def get_session_options(self):
        """A copy of the options the session was created with."""
        return copy.copy(self._sess_options)

    def end_profiling(self):
        """Writes the profile (SessionOptions.enable_profiling, or the entry epctx.profile_file):
        session creation, then every run node by node, in ONNX Runtime's profiler format (a
        Chrome-trace JSON array); profiling stops. Returns the file's path, or '' when the
        session is not profiled or its profile was already written. A profiled session that is
        not ended this way writes its profile when it goes."""
        return self._sess.end_profiling()

    def get_providers(self):
        return [_CPU]

    def get_provider_options(self):
        return {_CPU: {}}

    def get_session_origin(self):
        """epctx's own: SessionOrigin (runs from the blob? why not?)."""
        return SessionOrigin(self._sess.origin)
