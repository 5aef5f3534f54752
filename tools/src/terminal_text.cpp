#include "terminal_text.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <streambuf>
#include <string>

#include "kcache/common/log.hpp"
#include "kcache/config/text.hpp"

namespace kcache::cli {
namespace {

// A stream buffer that hands complete lines (and, at a flush, the rest) to
// `sink` escaped. A multi-byte character is never split: lines end at '\n',
// and a flush comes only after a whole insertion. Threads may share it.
class EscapingBuf final : public std::streambuf {
  public:
    explicit EscapingBuf(std::streambuf* sink) : sink_(sink) {}

  protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) {
            return traits_type::not_eof(c);
        }
        std::lock_guard lock(mutex_);
        pending_ += traits_type::to_char_type(c);
        return c == '\n' && !write_through(pending_.size()) ? traits_type::eof() : c;
    }

    std::streamsize xsputn(const char* s, std::streamsize n) override {
        std::lock_guard lock(mutex_);
        pending_.append(s, static_cast<std::size_t>(n));
        const std::size_t nl = pending_.rfind('\n');
        if (nl != std::string::npos && !write_through(nl + 1)) {
            return 0;
        }
        return n;
    }

    int sync() override {
        std::lock_guard lock(mutex_);
        return write_through(pending_.size()) && sink_->pubsync() == 0 ? 0 : -1;
    }

  private:
    // Writes the first `n` pending bytes escaped; false when the sink fails.
    // The caller holds `mutex_`.
    bool write_through(std::size_t n) {
        const std::string out = service::printable(std::string_view(pending_).substr(0, n));
        pending_.erase(0, n);
        return sink_->sputn(out.data(), static_cast<std::streamsize>(out.size())) ==
               static_cast<std::streamsize>(out.size());
    }

    std::streambuf* sink_;
    std::mutex mutex_;
    std::string pending_;
};

}  // namespace

void escape_output(std::ostream& stream) {
    // Never destroyed: the standard streams flush at exit, after statics die.
    static auto* installed = new std::map<std::ostream*, EscapingBuf*>();
    if (installed->contains(&stream)) {
        return;
    }
    auto* buf = new EscapingBuf(stream.rdbuf());
    (*installed)[&stream] = buf;
    stream.rdbuf(buf);
}

void escape_library_log() {
    logging::set_sink([](logging::Level level, std::string_view message) {
        const std::string line = service::printable(message);
        std::fprintf(stderr, "kcache: %s: %s\n",
                     level == logging::Level::warning ? "warning" : "error", line.c_str());
    });
}

}  // namespace kcache::cli
