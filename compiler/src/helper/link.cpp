// A link request (JitRequest::units): what clCompileProgram of each unit and
// clLinkProgram of them all make in the application's process, made here
// under the watchdog instead; and a compile alone (JitRequest::compile_only):
// clCompileProgram of the one unit, whose compiled object is the answer.

#include <algorithm>
#include <string>
#include <vector>

#include "helper.hpp"
#include "kcache/cl/program.hpp"

namespace kcache::compiler::helper {
namespace {

// A program of `text` (null with `e` set when the driver makes none).
cl::ProgramHandle from_source(cl_context ctx, const std::string& text, cl_int& e) {
    const char* src = text.c_str();
    const std::size_t len = text.size();
    return cl::ProgramHandle(clCreateProgramWithSource(ctx, 1, &src, &len, &e));
}

// The compiled object of unit `i`, or the reply saying why there is none.
Result<cl::ProgramHandle, JitReply> compile_unit(cl_context ctx, cl_device_id dev,
                                                 const CompileUnit& unit, std::size_t i,
                                                 bool arg_info) {
    const std::string which = "unit " + std::to_string(i) + ": ";
    cl_int e = CL_SUCCESS;
    cl::ProgramHandle p = from_source(ctx, unit.source, e);
    std::vector<cl::ProgramHandle> headers;
    std::vector<cl_program> header_programs;
    std::vector<const char*> names;
    for (const auto& [name, text] : unit.headers) {
        headers.push_back(from_source(ctx, text, e));
        header_programs.push_back(headers.back().get());
        names.push_back(name.c_str());
    }
    if (!p || std::find(header_programs.begin(), header_programs.end(), nullptr) !=
                  header_programs.end()) {
        return fail(failed(
            {ReplyStatus::driver_error, which + cl_failure("clCreateProgramWithSource", e)}));
    }
    // The warm-up fills arguments by type, which needs the argument metadata.
    const std::string options = arg_info ? unit.options + " -cl-kernel-arg-info" : unit.options;
    e = clCompileProgram(p.get(), 1, &dev, options.c_str(),
                         static_cast<cl_uint>(header_programs.size()),
                         header_programs.empty() ? nullptr : header_programs.data(),
                         names.empty() ? nullptr : names.data(), nullptr, nullptr);
    if (e != CL_SUCCESS) {
        return fail(failed({ReplyStatus::build_error, which + cl_failure("clCompileProgram", e)},
                           cl::build_log(p.get(), dev)));
    }
    return p;
}

}  // namespace

Result<cl::ProgramHandle, JitReply> compile_only(cl_context ctx, cl_device_id dev,
                                                 const JitRequest& q) {
    return compile_unit(ctx, dev, q.units.front(), 0, false);
}

Result<cl::ProgramHandle, JitReply> link_units(cl_context ctx, cl_device_id dev,
                                               const JitRequest& q) {
    std::vector<cl::ProgramHandle> objects;
    std::vector<cl_program> inputs;
    for (std::size_t i = 0; i < q.units.size(); ++i) {
        auto object = compile_unit(ctx, dev, q.units[i], i, q.warmup.has_value());
        if (!object) {
            return fail(object.error());
        }
        inputs.push_back(object->get());
        objects.push_back(std::move(*object));
    }
    cl_int e = CL_SUCCESS;
    cl::ProgramHandle linked(clLinkProgram(ctx, 1, &dev, q.options.c_str(),
                                           static_cast<cl_uint>(inputs.size()), inputs.data(),
                                           nullptr, nullptr, &e));
    if (e != CL_SUCCESS || !linked) {
        const std::string log = linked ? cl::build_log(linked.get(), dev) : std::string();
        return fail(failed({ReplyStatus::build_error, cl_failure("clLinkProgram", e)}, log));
    }
    return linked;
}

}  // namespace kcache::compiler::helper
