#include "apache_server.hpp"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "nginx_server.hpp"

namespace kcache::test {
namespace {

constexpr const char* kModules = "/usr/lib/apache2/modules/";

void write_conf(const std::filesystem::path& dir, int port, const ApacheOptions& options) {
    const std::string d = dir.string();
    std::ofstream conf(dir / "httpd.conf", std::ios::trunc);
    conf << "ServerRoot " << d << "\nServerName 127.0.0.1\nListen 127.0.0.1:" << port << "\n"
         << "PidFile " << d << "/httpd.pid\nErrorLog " << d << "/error.log\n";
    for (const char* m : {"mpm_event", "authz_core", "dav", "dav_fs", "auth_basic", "authn_core",
                          "authn_file", "authz_user"}) {
        conf << "LoadModule " << m << "_module " << kModules << "mod_" << m << ".so\n";
    }
    if (::geteuid() == 0) {
        conf << "User nobody\nGroup nogroup\n";  // httpd refuses to serve as root
    }
    conf << "LogFormat \"%m %U %>s\" kcache\nCustomLog " << d << "/access.log kcache\n"
         << "DocumentRoot " << d << "/root\nDavLockDB " << d << "/lock/DavLock\n"
         << "<Directory " << d << "/root>\n  Dav On\n";
    if (options.writers_file) {
        conf << "  AuthType Basic\n  AuthName \"kcache writers\"\n  AuthBasicProvider file\n"
             << "  AuthUserFile " << options.writers_file->string() << "\n"
             << "  <RequireAny>\n    Require method GET HEAD OPTIONS PROPFIND\n"
             << "    Require valid-user\n  </RequireAny>\n";
    } else {
        conf << (options.read_only ? "  Require method GET HEAD OPTIONS PROPFIND\n"
                                   : "  Require all granted\n");
    }
    conf << "</Directory>\n";
}

// Lets the workers (nobody, when started as root) reach and write the tree.
void hand_over(const std::filesystem::path& dir) {
    if (::geteuid() != 0) {
        return;
    }
    const passwd* nobody = ::getpwnam("nobody");
    std::error_code ec;
    for (const auto& p : {dir.parent_path(), dir}) {
        std::filesystem::permissions(p, std::filesystem::perms::others_exec,
                                     std::filesystem::perm_options::add, ec);
    }
    for (const auto& p : {dir / "root", dir / "lock"}) {
        if (nobody != nullptr && ::chown(p.c_str(), nobody->pw_uid, nobody->pw_gid) != 0) {
            return;
        }
    }
}

}  // namespace

Result<ApacheServer, std::string> ApacheServer::start(const std::filesystem::path& dir,
                                                      const ApacheOptions& options) {
    std::filesystem::create_directories(dir / "root");
    std::filesystem::create_directories(dir / "lock");
    hand_over(dir);
    ApacheServer s;
    s.dir_ = dir;
    if (start_on_free_port([&](int port) {
            s.port_ = port;
            write_conf(dir, port, options);
            return s.launch();
        })) {
        return s;
    }
    return fail(did_not_start("apache2", dir, {"error.log", "stderr.log"}));
}

bool ApacheServer::launch() {
    const std::string conf = (dir_ / "httpd.conf").string();
    const std::string err = (dir_ / "stderr.log").string();
    pid_ = ::fork();
    if (pid_ == 0) {
        if (std::FILE* f = std::freopen(err.c_str(), "w", stderr); f == nullptr) {
            ::_exit(126);
        }
        ::execl("/usr/sbin/apache2", "apache2", "-f", conf.c_str(), "-DFOREGROUND",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return wait_listening(pid_, port_);
}

ApacheServer::ApacheServer(ApacheServer&& o) noexcept
    : dir_(std::move(o.dir_)), port_(o.port_), pid_(std::exchange(o.pid_, -1)) {}

ApacheServer::~ApacheServer() {
    stop();
}

void ApacheServer::stop() {
    stop_process(pid_);  // httpd stops its children, then exits
}

std::string ApacheServer::url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
}

std::size_t ApacheServer::count(const std::string& method, int status) const {
    // httpd logs a request after its response has gone out: let it land.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream log(dir_ / "access.log");
    std::size_t n = 0;
    for (std::string line; std::getline(log, line);) {
        const std::string tail = " " + std::to_string(status);
        const bool ends_in_status =
            status == 0 || (line.size() > tail.size() &&
                            line.compare(line.size() - tail.size(), tail.size(), tail) == 0);
        n += line.rfind(method + " ", 0) == 0 && ends_in_status ? 1 : 0;
    }
    return n;
}

}  // namespace kcache::test
