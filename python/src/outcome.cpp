// Outcome (how a request was answered) and ProgramHandle (one owned
// cl_program reference) as Python sees them.

#include <pybind11/stl.h>

#include <cstdio>
#include <utility>

#include "bindings.hpp"

namespace py = pybind11;

namespace kcache::python {
namespace {

double seconds(std::chrono::microseconds us) {
    return static_cast<double>(us.count()) / 1e6;
}

py::list misses_of(const Outcome& o) {
    py::list out;
    for (const RungMiss& m : o.misses) {
        out.append(py::make_tuple(to_string(m.rung), to_string(m.cause), m.detail));
    }
    return out;
}

std::string repr(const Outcome& o) {
    std::string s = std::string("Outcome(status='") + to_string(o.status) + "', rung='" +
                    to_string(o.rung) + "', key='" + o.key +
                    "', total=" + std::to_string(seconds(o.total)) +
                    ", compile=" + std::to_string(seconds(o.compile)) +
                    (o.resident ? ", resident=True" : "") + ", misses=";
    return s + py::str(misses_of(o)).cast<std::string>() + ")";
}

// One program reference, released when this object goes unless detach()
// handed it to someone else first.
struct ProgramHandle {
    Program program;
};

}  // namespace

std::optional<std::chrono::milliseconds> deadline_of(std::optional<std::int64_t> ms) {
    if (!ms) {
        return std::nullopt;
    }
    return std::chrono::milliseconds(*ms);
}

Mode mode_of(const std::string& name) {
    for (Mode m : {Mode::blocking, Mode::fail_fast, Mode::background}) {
        if (name == to_string(m)) {
            return m;
        }
    }
    throw py::value_error("mode must be 'blocking', 'fail_fast' or 'background', not '" + name +
                          "'");
}

void bind_outcome(py::module_& m) {
    py::class_<Outcome>(m, "Outcome",
                        "How a request was answered: status, the rung of the lookup ladder "
                        "that answered, why each rung above it missed, the cache key and "
                        "timings (seconds).")
        .def_property_readonly(
            "status", [](const Outcome& o) { return to_string(o.status); },
            "'ok' or the failure: 'timeout', 'crashed', 'build_error', 'unsupported', ...")
        .def_property_readonly(
            "ok", [](const Outcome& o) { return o.status == StatusCode::ok; },
            "True when a program (or binary) came back.")
        .def_property_readonly(
            "rung", [](const Outcome& o) { return to_string(o.rung); },
            "Which rung answered: 'in_process', 'user_store', 'pack', 'aot', "
            "'failure_record', 'jit' or 'none'.")
        .def_property_readonly(
            "misses", &misses_of,
            "[(rung, cause, detail), ...]: why each rung above the answering one "
            "missed, in ladder order.")
        .def_readonly("message", &Outcome::message,
                      "Text for people; the build log on 'build_error'.")
        .def_readonly("key", &Outcome::key, "Hex cache key ('' when not known).")
        .def_property_readonly(
            "total", [](const Outcome& o) { return seconds(o.total); }, "Seconds the request took.")
        .def_property_readonly(
            "compile", [](const Outcome& o) { return seconds(o.compile); },
            "Seconds of helper wall time when a JIT ran, else 0.")
        .def_readonly("resident", &Outcome::resident,
                      "True when the binary came from this process's memory (no store "
                      "read); `rung` still names the tier that holds it.")
        .def("__repr__", &repr);

    py::class_<ProgramHandle>(m, "ProgramHandle",
                              "A built cl_program with one reference owned by this object "
                              "(released when it is garbage-collected), and its outcome.")
        .def_property_readonly(
            "int_ptr",
            [](const ProgramHandle& h) { return reinterpret_cast<HandleInt>(h.program.get()); },
            "The cl_program's address; 0 once detach() handed the reference over.")
        .def_property_readonly(
            "kcache_outcome", [](const ProgramHandle& h) { return h.program.outcome(); },
            "The Outcome of the request that produced this program.")
        .def(
            "detach",
            [](ProgramHandle& h) {
                if (!h.program.ok()) {
                    throw py::value_error(
                        "this ProgramHandle no longer owns a program: its reference was "
                        "already handed over by an earlier detach()");
                }
                return reinterpret_cast<HandleInt>(h.program.release());
            },
            "Hands the caller this object's reference (as an int) and forgets it, so "
            "it is released exactly once, by the new owner. A second call raises "
            "ValueError.")
        .def("__bool__", [](const ProgramHandle& h) { return h.program.ok(); })
        .def("__repr__", [](const ProgramHandle& h) {
            char address[32];
            std::snprintf(address, sizeof address, "%p", static_cast<void*>(h.program.get()));
            return std::string("<kcache.ProgramHandle ") + address + " from " +
                   to_string(h.program.outcome().rung) + ">";
        });
}

// Moves `p` into a new ProgramHandle Python object.
py::object make_handle(Program p) {
    return py::cast(ProgramHandle{std::move(p)}, py::return_value_policy::move);
}

}  // namespace kcache::python
