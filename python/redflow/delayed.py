"""Graphs built by calling functions, in the style of ``dask.delayed``.

``input`` and ``constant`` make values; a function decorated with ``actor``
(or a C++ actor through ``call``) applied to values makes a new value
instead of computing it; ``compute`` (once) or ``program`` (many
executions) turns the values asked for into a redflow graph, with a Python
actor registered per call site, and runs it::

    import numpy as np, redflow

    @redflow.actor
    def scale(a, out):          # writes its output in place: no copy
        np.multiply(a, 2.0, out=out)

    @redflow.actor(redundancy="3x-diff")
    def total(a):               # returns its output: copied into the slot once
        return np.cumsum(a)

    x = redflow.input("x", shape=(1000,), dtype=np.float64)
    y = total(scale(x))
    (result,) = redflow.compute(y, inputs={"x": np.ones(1000)}, tiles=3)

Every value has a shape and a dtype: an input's and a constant's are given,
an actor's output is declared (``shape=``, ``dtype=``, each a value or a
function of the input values) or else is the first input's.
"""
import inspect
import itertools

import numpy as np

from ._redflow import Graph, Registry, Runtime

_counter = itertools.count(1)


class Value:
    """A value of a graph being built: an input, a constant, or an actor's output."""

    def __init__(self, kind, name, shape, dtype, *, array=None, function=None, inputs=(), args="",
                 redundancy=None, python=None, actor=None):
        self.kind = kind              # "input", "constant" or "actor"
        self.name = name              # the data node's name in the graph
        self.actor = actor            # actors: the actor node's name (errors name it)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.array = array            # constants
        self.function = function      # actors: the registered name (a Python actor's is made at build time)
        self.inputs = tuple(inputs)
        self.args = args
        self.redundancy = redundancy
        self.python = python          # Python actors: (callable, writes_out)

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self):
        return f"<redflow.Value {self.kind} '{self.name}' {self.shape} {self.dtype}>"


def input(name, shape, dtype):  # noqa: A001 - the graph's word for it
    """An input of the graph, given at each execution as an array of this shape and dtype."""
    return Value("input", name, _shape(shape), dtype)


def constant(array, name=None):
    """A constant: the graph keeps a copy of ``array``."""
    array = np.ascontiguousarray(array)
    return Value("constant", name or f"const_{next(_counter)}", array.shape, array.dtype, array=array)


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _declared(spec, inputs, default):
    if spec is None:
        return default
    # A function of the input values; a type (numpy.int64) is a dtype, not one.
    return spec(*inputs) if callable(spec) and not isinstance(spec, type) else spec


def _output_of(what, values, shape, dtype):
    """An actor's output shape and dtype on ``values``: declared, or the first input's."""
    _check_values(what, values)
    if not values and (shape is None or dtype is None):
        raise ValueError(f"{what} has no inputs: declare its output's shape and dtype")
    first = values[0] if values else None
    return (_shape(_declared(shape, values, first.shape if first else None)),
            _declared(dtype, values, first.dtype if first else None))


def _check_values(what, values):
    for v in values:
        if not isinstance(v, Value):
            raise TypeError(f"{what}: {v!r} is not a redflow value (make inputs with redflow.input or redflow.constant)")


def actor(function=None, *, shape=None, dtype=None, redundancy=None, name=None):
    """Decorates ``function`` so that calling it on values adds an actor.

    The function gets one NumPy array per input (read-only, with the input
    value's shape and dtype) and either writes its output into the keyword
    argument ``out`` (when it has one: no copy) or returns it (copied into
    the output slot once). ``shape`` and ``dtype`` declare the output (a
    value, or a function of the input values); by default the first
    input's. ``redundancy`` protects this actor ("2x-same" ... "3x-diff").
    """
    def wrap(fn):
        base = name or fn.__name__
        try:
            writes_out = "out" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            writes_out = False

        def call_site(*values):
            out_shape, out_dtype = _output_of(f"actor '{base}'", values, shape, dtype)
            label = f"{base}_{next(_counter)}"
            return Value("actor", label + "_out", out_shape, out_dtype, inputs=values, redundancy=redundancy,
                         python=(fn, writes_out, base), actor=label)

        call_site.__name__ = getattr(fn, "__name__", base)
        call_site.__doc__ = getattr(fn, "__doc__", None)
        call_site.__wrapped__ = fn
        call_site.__redflow_actor__ = (base, fn, writes_out)  # what register_actors() registers
        return call_site

    return wrap(function) if function is not None else wrap


def call(function, *values, shape=None, dtype=None, args="", redundancy=None, name=None):
    """A registered actor (built-in, from a plugin, or added to the registry) on ``values``."""
    out_shape, out_dtype = _output_of(f"actor '{function}'", values, shape, dtype)
    label = name or f"{function.replace('.', '_')}_{next(_counter)}"
    return Value("actor", label + "_out", out_shape, out_dtype, function=function, inputs=values, args=args,
                 redundancy=redundancy, actor=label)


def _spec(value):
    """A value's dtype and shape in an actor's args: "<f8:100x4" ("<f8:" for a scalar)."""
    return f"{value.dtype.str}:{'x'.join(str(d) for d in value.shape)}"


def _parse_spec(text):
    dtype, _, dims = text.partition(":")
    return np.dtype(dtype), tuple(int(d) for d in dims.split("x")) if dims else ()


def _site_args(inputs, out_value):
    """A call site's args: its inputs' and output's dtypes and shapes, so that one
    registered function serves every call site, in this process and in workers."""
    return "py:" + ";".join(_spec(v) for v in inputs) + "->" + _spec(out_value)


def python_actor(fn, writes_out):
    """The fn(inputs, output, args) a registry runs for a decorated function: it
    views the slots as the call site's arrays (from its args) and calls ``fn``."""
    sites = {}

    def run(buffers, output, args):
        site = sites.get(args)
        if site is None:
            ins, _, out = args[len("py:"):].partition("->")
            site = sites[args] = ([_parse_spec(t) for t in ins.split(";")] if ins else [], _parse_spec(out))
        in_specs, (out_dtype, out_shape) = site
        arrays = [b.view(d).reshape(s) for b, (d, s) in zip(buffers, in_specs)]
        out = output.view(out_dtype).reshape(out_shape)
        if writes_out:
            fn(*arrays, out=out)
            return
        result = fn(*arrays)
        if result is None:
            raise ValueError(f"{fn.__name__} returned None: return the output, or take an `out` argument and write it")
        result = np.asarray(result)
        if result.shape != out_shape and result.size != out.size:
            raise ValueError(f"{fn.__name__} returned shape {result.shape}, the actor's output is {out_shape}")
        out[...] = result.reshape(out_shape)

    return run


def register_actors(registry, *sources):
    """Registers every function decorated with ``actor`` found in ``sources``
    (modules, or the functions themselves) as "py.NAME": what a worker process
    needs to run a program's Python actors (``python3 -m redflow.worker``)."""
    names = []
    for source in sources:
        found = [source] if hasattr(source, "__redflow_actor__") else [
            getattr(source, a) for a in dir(source) if hasattr(getattr(source, a), "__redflow_actor__")]
        for f in found:
            base, fn, writes_out = f.__redflow_actor__
            if "py." + base not in registry:
                registry.add("py." + base, python_actor(fn, writes_out), summary=f"Python: {fn.__qualname__}")
                names.append("py." + base)
    return names


class Program:
    """The graph the asked-for values need, with the registry of its actors.

    ``outputs`` are the values asked for, in order; ``graph`` and ``registry``
    can also be used directly (``Runtime.load``).
    """

    def __init__(self, values, registry=None, plugins=(), name="redflow"):
        _check_values("program", values)
        if not values:
            raise ValueError("program: ask for at least one value")
        self.outputs = tuple(values)
        self.registry = registry if registry is not None else Registry()
        for plugin in plugins:
            self.registry.load_plugin(str(plugin))
        self.graph = Graph(name)
        self.inputs = {}
        order = self._topological(self.outputs)
        wanted = {id(v) for v in self.outputs}
        names, ids = set(), {}
        for v in order:
            if v.name in names:
                raise ValueError(f"two values are named '{v.name}': give inputs and constants distinct names")
            names.add(v.name)
            if v.kind == "input":
                if id(v) in wanted:
                    raise ValueError(f"input '{v.name}' is asked for as an output: ask for a value computed from it")
                ids[id(v)] = self.graph.input(v.name, shape=v.shape, dtype=v.dtype)
                self.inputs[v.name] = v
            elif v.kind == "constant":
                ids[id(v)] = self.graph.constant(v.name, v.array)
            else:
                make = self.graph.output if id(v) in wanted else self.graph.inner
                ids[id(v)] = make(v.name, shape=v.shape, dtype=v.dtype)
        registered = {}
        for v in order:
            if v.kind != "actor":
                continue
            function, args = v.function, v.args
            if v.python is not None:
                fn, writes_out, base = v.python
                function, args = "py." + base, _site_args(v.inputs, v)
                if registered.setdefault(function, fn) is not fn:
                    raise ValueError(f"two different functions are actors named '{base}': give one another name "
                                     "(@redflow.actor(name=...))")
                if function not in self.registry:
                    self.registry.add(function, python_actor(fn, writes_out), summary=f"Python: {fn.__qualname__}")
            # By id: a name is looked up by a scan of the graph's nodes.
            self.graph.actor(v.actor, function, [ids[id(i)] for i in v.inputs], ids[id(v)], args=args,
                             redundancy=v.redundancy)

    @staticmethod
    def _topological(values):
        """The values ``values`` need, each after its inputs (iterative: a chain
        of 10^5 actors is deeper than Python's recursion limit)."""
        order, seen = [], set()
        for root in values:
            if id(root) in seen:
                continue
            seen.add(id(root))
            stack = [(root, iter(root.inputs))]
            while stack:
                v, pending = stack[-1]
                for i in pending:
                    if id(i) not in seen:
                        seen.add(id(i))
                        stack.append((i, iter(i.inputs)))
                        break
                else:
                    stack.pop()
                    order.append(v)
        return order

    def load(self, runtime=None, **options):
        """Loads the graph on ``runtime`` (or a Runtime made from ``options``): a Loaded to execute."""
        if runtime is None:
            runtime = Runtime(**options)
        elif options:
            raise TypeError("give a runtime or its options, not both")
        return Loaded(self, runtime, runtime.load(self.graph, self.registry))


class Loaded:
    """A Program loaded on a runtime: execute it many times."""

    def __init__(self, program, runtime, loaded):
        self.program, self.runtime, self.loaded = program, runtime, loaded

    def execute(self, inputs=None, **options):
        """Runs once; returns the asked-for values as arrays of their shapes (views, no copy)."""
        inputs = dict(inputs or {})
        missing = [n for n in self.program.inputs if n not in inputs]
        if missing:
            raise KeyError(f"no array given for input(s) {', '.join(repr(m) for m in missing)}")
        arrays = {}
        for name, given in inputs.items():
            if name not in self.program.inputs:
                raise KeyError(f"'{name}' is not an input of this program (inputs: {', '.join(self.program.inputs)})")
            v = self.program.inputs[name]
            a = np.asarray(given)
            if a.shape != v.shape:
                raise ValueError(f"input '{name}' has shape {a.shape}, the program declares {v.shape}")
            arrays[name] = a.reshape(-1) if a.flags.c_contiguous else a
        out = self.loaded.execute(arrays, **options)
        return tuple(out[v.name].reshape(v.shape) for v in self.program.outputs)

    @property
    def stats(self):
        """The last execution's statistics (a dict)."""
        return self.loaded.stats

    @property
    def trace(self):
        """The last execution as a Chrome trace (a dict); empty without trace=True."""
        return self.loaded.trace


def program(*values, registry=None, plugins=(), name="redflow"):
    """The Program computing ``values``: load it once, execute it many times."""
    return Program(values, registry=registry, plugins=plugins, name=name)


def compute(*values, inputs=None, registry=None, plugins=(), **options):
    """Builds, loads and runs the graph of ``values`` once; returns their arrays, in order (a tuple).

    ``options`` are the Runtime's (tiles, scheduler, redundancy, inject, ...).
    """
    return program(*values, registry=registry, plugins=plugins).load(**options).execute(inputs)
