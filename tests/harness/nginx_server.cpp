#include "nginx_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

namespace kcache::test {
bool can_connect(int port) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

bool wait_listening(pid_t& pid, int port) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            pid = -1;
            return false;  // exited: the port was taken, or a bad config
        }
        if (can_connect(port)) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop_process(pid);
    return false;
}

void stop_process(pid_t& pid) {
    if (pid <= 0) {
        return;
    }
    ::kill(pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 500 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (i == 300) {
            ::kill(pid, SIGKILL);
        }
    }
    pid = -1;
}

namespace {

// The token check NginxOptions::bearer_token asks for, in its own file.
void write_token_conf(const std::filesystem::path& dir, const std::string& token) {
    std::ofstream(dir / "token.conf", std::ios::trunc)
        << "if ($http_authorization != \"Bearer " << token << "\") { return 401; }\n";
}

void write_conf(const std::filesystem::path& dir, int port, const NginxOptions& o) {
    const std::string d = dir.string();
    if (o.bearer_token) {
        write_token_conf(dir, *o.bearer_token);
    }
    std::ofstream conf(dir / "nginx.conf", std::ios::trunc);
    if (o.propfind) {
        conf << "load_module /usr/lib/nginx/modules/ngx_http_dav_ext_module.so;\n";
    }
    conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         << "pid " << d << "/nginx.pid;\nerror_log " << d << "/error.log info;\n"
         << "events { worker_connections 1024; }\nhttp {\n"
         << "  log_format kc '$request_method $request_uri $status';\n"
         << "  access_log " << d << "/access.log kc;\n";
    for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
        conf << "  " << t << "_temp_path " << d << "/tmp;\n";
    }
    conf << "  server {\n    listen 127.0.0.1:" << port << (o.tls_cert ? " ssl" : "") << ";\n";
    if (o.tls_cert) {
        conf << "    ssl_certificate " << o.tls_cert->string() << ";\n"
             << "    ssl_certificate_key " << o.tls_key->string() << ";\n";
    }
    conf << "    root " << d << "/root;\n"
         << "    location /kcache/ {\n"
         << "      dav_methods PUT DELETE" << (o.mkcol ? " MKCOL" : "") << ";\n"
         << (o.propfind ? "      dav_ext_methods PROPFIND OPTIONS;\n" : "")
         << "      create_full_put_path " << (o.create_full_put_path ? "on" : "off") << ";\n"
         << "      dav_access user:rw;\n"
         << "      client_max_body_size " << o.max_body << ";\n"
         << (o.read_only ? "      limit_except GET HEAD { deny all; }\n" : "")
         << (o.writers_file ? "      limit_except GET HEAD { auth_basic \"kcache writers\";\n"
                              "        auth_basic_user_file " +
                                  o.writers_file->string() + "; }\n"
                            : "")
         << (o.bearer_token ? "      include " + d + "/token.conf;\n" : "") << "    }\n"
         << "    location /broken/ { return 500; }\n"
         << "    location /loop/ { return 302 $scheme://$host:$server_port$request_uri; }\n"
         // Hostile servers: a page for every path, a HEAD that says yes to
         // everything (writes reach the real root), requests refused for a while.
         << "    location /html/ { default_type text/html;\n"
         << "      return 200 \"<!DOCTYPE html><html><body>Welcome</body></html>\\n\"; }\n"
         << "    location /liar/ {\n"
         << "      if ($request_method = HEAD) { return 200; }\n"
         << "      if ($request_method = GET) { return 404; }\n"
         << "      rewrite ^/liar(/.*)$ $1 last;\n    }\n"
         << "    location /busy/ { add_header Retry-After 120 always; return 429; }\n"
         << "    location /denied/ { add_header Retry-After 120 always; return 403; }\n"
         << "  }\n}\n";
}

}  // namespace

int free_port() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        return 0;
    }
    return ntohs(a.sin_port);
}

std::string did_not_start(const std::string& server, const std::filesystem::path& dir,
                          std::initializer_list<const char*> logs) {
    std::string message = server + " did not start in " + dir.string() + ":\n";
    for (const char* log : logs) {
        std::ifstream in(dir / log);
        message.append(std::istreambuf_iterator<char>(in), {});
    }
    return message;
}

bool start_on_free_port(const std::function<bool(int port)>& start) {
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (start(free_port())) {
            return true;
        }
    }
    return false;
}

Result<NginxServer, std::string> NginxServer::start(const std::filesystem::path& dir,
                                                    const NginxOptions& options) {
    std::filesystem::create_directories(dir / "root" / "kcache");
    std::filesystem::create_directories(dir / "tmp");
    NginxServer s;
    s.dir_ = dir;
    s.tls_ = options.tls_cert.has_value();
    if (start_on_free_port([&](int port) {
            s.port_ = port;
            write_conf(dir, port, options);
            return s.launch();
        })) {
        return s;
    }
    return fail(did_not_start("nginx", dir, {"error.log"}));
}

bool NginxServer::launch() {
    const std::string d = dir_.string();
    pid_ = ::fork();
    if (pid_ == 0) {
        ::execlp("nginx", "nginx", "-p", d.c_str(), "-c", (d + "/nginx.conf").c_str(), "-e",
                 (d + "/error.log").c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return wait_listening(pid_, port_);
}

NginxServer::NginxServer(NginxServer&& o) noexcept
    : dir_(std::move(o.dir_)), port_(o.port_), tls_(o.tls_), pid_(std::exchange(o.pid_, -1)) {}

NginxServer& NginxServer::operator=(NginxServer&& o) noexcept {
    if (this != &o) {
        stop();
        dir_ = std::move(o.dir_);
        port_ = o.port_;
        tls_ = o.tls_;
        pid_ = std::exchange(o.pid_, -1);
    }
    return *this;
}

NginxServer::~NginxServer() {
    stop();
}

void NginxServer::stop() {
    stop_process(pid_);
}

bool NginxServer::restart() {
    return pid_ <= 0 && launch();
}

bool NginxServer::accept_only_token(const std::string& token) {
    write_token_conf(dir_, token);
    stop();
    return restart();
}

std::string NginxServer::url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::filesystem::path NginxServer::object_file(const std::string& key) const {
    return root() / "kcache" / "v1" / key.substr(0, 2) / key;
}

std::vector<std::string> NginxServer::requests() const {
    // nginx logs a request after its response has gone out: let it land.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<std::string> out;
    std::ifstream in(dir_ / "access.log");
    for (std::string line; std::getline(in, line);) {
        out.push_back(line);
    }
    return out;
}

std::size_t NginxServer::count(const std::string& method) const {
    std::size_t n = 0;
    for (const std::string& line : requests()) {
        n += line.rfind(method + " ", 0) == 0 ? 1 : 0;
    }
    return n;
}

std::optional<SilentServer> SilentServer::start() {
    SilentServer s;
    s.fd_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (!s.fd_.valid() || ::bind(s.fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(s.fd_.get(), 64) != 0 ||
        ::getsockname(s.fd_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        return std::nullopt;
    }
    s.port_ = ntohs(a.sin_port);
    return s;
}

bool make_self_signed_cert(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    const std::string d = dir.string();
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "
        "/CN=127.0.0.1"
        " -addext subjectAltName=IP:127.0.0.1 -keyout '" +
        d + "/key.pem' -out '" + d + "/cert.pem' >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
}

}  // namespace kcache::test
