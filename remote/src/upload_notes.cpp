// Why uploads were skipped or failed: one note per kind, counted, with the
// first message of the kind, for warm, push and doctor to say once.

#include "client_impl.hpp"

namespace kcache::remote {

void UploadNotes::add(const std::string& kind, const std::string& why) {
    std::lock_guard g(mu_);
    for (auto& [k, note] : notes_) {
        if (k == kind) {
            ++note.count;
            return;
        }
    }
    notes_.push_back({kind, UploadNote{why, 1}});
}

void UploadNotes::add(const RemoteError& e, long status) {
    std::string why = e.message;
    if (e.code == RemoteErrc::http_status && status != 0) {
        why = "refused by the server (HTTP " + std::to_string(status) + "): " + e.message;
    }
    add(std::string(to_string(e.code)) + ":" + std::to_string(status), why);
}

std::vector<UploadNote> UploadNotes::list() const {
    std::lock_guard g(mu_);
    std::vector<UploadNote> out;
    for (const auto& [kind, note] : notes_) {
        out.push_back(note);
    }
    return out;
}

std::vector<UploadNote> Client::upload_notes() const {
    return impl_->upload_notes.list();
}

}  // namespace kcache::remote
