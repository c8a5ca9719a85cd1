"""OrtValue and IOBinding as onnxruntime names them, for decode loops that keep their buffers.

An OrtValue is a value with its memory: a view of a NumPy array (no copy), memory allocated here,
or memory the caller gives by address. An IOBinding holds a session's inputs and outputs between
runs; an output bound to an OrtValue is written into its memory, so a decode loop that binds
past_key and present_key to one buffer of max_sequence_length rows (onnxruntime's shared
past/present buffer) copies no KV cache per token.
"""

from . import _epctx

_CPU = "cpu"


def _check_device(device_type, device_id, what):
    """epctx runs on the CPU: any other device is refused rather than ignored."""
    if not isinstance(device_type, str) or device_type.lower() != _CPU:
        raise _epctx.Unsupported(
            f"{what}: device_type {device_type!r} is not supported: epctx runs on the CPU only "
            f"(device_type 'cpu')")
    if device_id != 0:
        raise _epctx.Unsupported(f"{what}: device_id {device_id!r} is not supported: the CPU is device 0")


class OrtValue:
    """A tensor (or a sequence, or an empty optional) and the memory it lives in, on the CPU.

    Made by ortvalue_from_numpy (a view of the array, which it keeps alive),
    ortvalue_from_shape_and_type (memory of its own, zero-filled), or returned by
    IOBinding.get_outputs() and InferenceSession.run_with_ort_values(). numpy() views the
    value's memory without a copy (onnxruntime copies on the CPU as well as from devices).
    """

    def __init__(self, ortvalue, numpy_obj=None):
        if not isinstance(ortvalue, _epctx._OrtValue):
            raise ValueError("`Provided ortvalue` needs to be of type `epctx._epctx._OrtValue`")
        self._ortvalue = ortvalue
        self._numpy_obj = numpy_obj

    def _get_c_value(self):
        return self._ortvalue

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        """A view of `numpy_obj` (C-contiguous, aligned, native byte order; other arrays are
        copied once). Writes by a run (a bound output) go to the array."""
        _check_device(device_type, device_id, "OrtValue.ortvalue_from_numpy")
        return OrtValue(_epctx._OrtValue.from_numpy(numpy_obj), numpy_obj)

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0):
        """Memory of its own for a tensor of `shape`; `element_type` is a NumPy type
        (numpy.float32) or an ONNX type number (onnx.TensorProto.FLOAT)."""
        if shape is None or element_type is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
        _check_device(device_type, device_id, "OrtValue.ortvalue_from_shape_and_type")
        return OrtValue(_epctx._OrtValue.from_shape_and_type(list(shape), element_type))

    def data_ptr(self):
        """The address of the first element."""
        return self._ortvalue.data_ptr()

    def device_name(self):
        return _CPU

    def shape(self):
        return self._ortvalue.shape()

    def data_type(self):
        """'tensor(float)', 'seq(tensor(int64))', 'optional(tensor(float))', ..."""
        return self._ortvalue.data_type()

    def element_type(self):
        """The ONNX TensorProto type number of the elements (onnx.TensorProto.FLOAT is 1)."""
        return self._ortvalue.element_type()

    def has_value(self):
        return self._ortvalue.has_value()

    def is_tensor(self):
        return self._ortvalue.is_tensor()

    def is_sparse_tensor(self):
        return False

    def is_tensor_sequence(self):
        return self._ortvalue.is_tensor_sequence()

    def numpy(self):
        """The tensor as a NumPy array over the same memory (no copy; string tensors are
        converted to object arrays of str). Only for tensors."""
        return self._ortvalue.numpy()

    def update_inplace(self, np_arr):
        """Copies `np_arr` (same element type and count) into the value's memory."""
        self._ortvalue.update_inplace(np_arr)

    def __repr__(self):
        if not self._ortvalue.has_value():
            return "OrtValue(no value)"
        return f"OrtValue({self.data_type()}, shape={self.shape()})"


class IOBinding:
    """A session's inputs and outputs, bound between runs (InferenceSession.io_binding()).

    Inputs are read in place. An output bound to an OrtValue (bind_ortvalue_output, or
    bind_output with a buffer_ptr) is written into that memory and must have exactly the shape
    the run makes; an output bound with bind_output(name) alone gets new memory every run.
    get_outputs() returns the outputs of the last run in binding order.
    """

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = {}  # name -> native _OrtValue to write into, or None: allocated per run
        self._results = {}  # name -> OrtValue of the last run

    def _check_name(self, name, what):
        """Refuses a name the model does not have when it is bound, as onnxruntime does."""
        values = self._session.get_inputs() if what == "input" else self._session.get_outputs()
        names = [v.name for v in values]
        if name not in names:
            raise _epctx.InvalidArgument(
                f"bind_{what}('{name}'): the model has no {what} '{name}'; its {what}s are: "
                + ", ".join(names))

    def bind_cpu_input(self, name, arr_on_cpu):
        """Binds input `name` to a NumPy array, read in place (kept alive by the binding)."""
        self._check_name(name, "input")
        self._inputs[name] = OrtValue.ortvalue_from_numpy(arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Binds input `name` to memory at address `buffer_ptr` holding a tensor of `shape` and
        `element_type` (a NumPy type or an ONNX type number); it must stay valid while bound."""
        _check_device(device_type, device_id, f"bind_input('{name}')")
        self._check_name(name, "input")
        value = _epctx._OrtValue.from_address(int(buffer_ptr), element_type, list(shape),
                                              f"bind_input('{name}')")
        self._inputs[name] = OrtValue(value)

    def bind_ortvalue_input(self, name, ortvalue):
        if not isinstance(ortvalue, OrtValue):
            raise TypeError(f"bind_ortvalue_input('{name}') takes an epctx.OrtValue, got {type(ortvalue).__name__}")
        self._check_name(name, "input")
        self._inputs[name] = ortvalue

    def synchronize_inputs(self):
        """Nothing to wait for on the CPU."""

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        """Binds output `name`: with `buffer_ptr`, to the memory at that address (a tensor of
        `shape` and `element_type`, valid and writable while bound); without it, the run
        allocates the output anew every run."""
        _check_device(device_type, device_id, f"bind_output('{name}')")
        if buffer_ptr is None:
            self._bind(name, None)
            return
        if element_type is None or shape is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
        value = _epctx._OrtValue.from_address(int(buffer_ptr), element_type, list(shape),
                                              f"bind_output('{name}')")
        self._bind(name, OrtValue(value))

    def bind_ortvalue_output(self, name, ortvalue):
        if not isinstance(ortvalue, OrtValue):
            raise TypeError(f"bind_ortvalue_output('{name}') takes an epctx.OrtValue, got {type(ortvalue).__name__}")
        self._bind(name, ortvalue)

    def _bind(self, name, ortvalue):
        self._check_name(name, "output")
        # Binding a name again keeps its place in the order, as onnxruntime does.
        self._outputs[name] = ortvalue
        self._results[name] = ortvalue if ortvalue is not None else OrtValue(_epctx._OrtValue())

    def synchronize_outputs(self):
        """Nothing to wait for on the CPU."""

    def get_outputs(self):
        """The bound outputs after the last run, as OrtValues, in binding order (an output bound
        to an OrtValue is that OrtValue)."""
        return [self._results[name] for name in self._outputs]

    def copy_outputs_to_cpu(self):
        """The bound outputs after the last run as NumPy arrays of their own (copies), as run()
        returns them (a sequence as a list of arrays; an empty optional, or an output without a
        value yet, as None)."""
        return [value._ortvalue.copy_to_python() for value in self.get_outputs()]

    def clear_binding_inputs(self):
        self._inputs.clear()

    def clear_binding_outputs(self):
        self._outputs.clear()
        self._results.clear()

    def _run(self, run_options):
        feed = {name: value._get_c_value() for name, value in self._inputs.items()}
        bindings = [(name, None if value is None else value._get_c_value())
                    for name, value in self._outputs.items()]
        values = self._session._sess.run_with_bindings(feed, bindings, run_options)
        for (name, bound), value in zip(self._outputs.items(), values):
            self._results[name] = bound if bound is not None else OrtValue(value)
