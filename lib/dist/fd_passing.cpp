#include "dist/fd_passing.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace vgen {
namespace {

sockaddr_un address(int pid, int fd, uint32_t nonce, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string name = fmt::format("vgen-fd-{}-{}-{:08x}", pid, fd, nonce);
  std::memcpy(a.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: the abstract namespace
  *len = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

std::string sys_error(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// Waits for `sock` to be readable (a connection to accept, a message to receive).
bool wait_readable(int sock, int timeout_ms, const char* what, std::string* error) {
  pollfd p{sock, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r > 0) return true;
  *error = r == 0 ? fmt::format("{}: nothing within {} ms", what, timeout_ms) : sys_error(what);
  return false;
}

// A one-byte message with room for one descriptor (SCM_RIGHTS), for sendmsg and recvmsg alike.
struct FdMessage {
  char byte = 'f';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  FdMessage() {
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage&) = delete;  // m points into itself
  FdMessage& operator=(const FdMessage&) = delete;
};

bool send_fd(int sock, int fd, std::string* error) {
  FdMessage msg;
  msghdr& m = msg.m;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  if (sendmsg(sock, &m, MSG_NOSIGNAL) == 1) return true;
  *error = sys_error("sendmsg (SCM_RIGHTS)");
  return false;
}

}  // namespace

FdListener::FdListener(int fd, uint32_t nonce) : fd_(fd) {
  sock_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock_ < 0) {
    error_ = sys_error("socket(AF_UNIX)");
    return;
  }
  socklen_t len = 0;
  const sockaddr_un a = address(getpid(), fd, nonce, &len);
  if (bind(sock_, reinterpret_cast<const sockaddr*>(&a), len) != 0 || listen(sock_, 256) != 0) {
    error_ = sys_error("bind/listen on an abstract Unix socket");
    close(sock_);
    sock_ = -1;
  }
}

FdListener::~FdListener() {
  if (sock_ >= 0) close(sock_);
}

bool FdListener::serve(int connections, int timeout_ms, std::string* error) {
  if (sock_ < 0) return *error = error_, false;
  for (int i = 0; i < connections; ++i) {
    if (!wait_readable(sock_, timeout_ms, "accept", error)) {
      *error = fmt::format("{} ({} of {} peers connected)", *error, i, connections);
      return false;
    }
    const int c = accept4(sock_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return *error = sys_error("accept4"), false;
    const bool sent = send_fd(c, fd_, error);
    close(c);  // the message (and the descriptor in flight) stays readable for the peer
    if (!sent) return false;
  }
  return true;
}

int fd_connect(int pid, int fd, uint32_t nonce, std::string* error) {
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return *error = sys_error("socket(AF_UNIX)"), -1;
  socklen_t len = 0;
  const sockaddr_un a = address(pid, fd, nonce, &len);
  if (connect(s, reinterpret_cast<const sockaddr*>(&a), len) != 0) {
    *error = sys_error(fmt::format("connect to the descriptor of pid {} (not in this network namespace?)", pid));
    close(s);
    return -1;
  }
  return s;
}

int fd_receive(int sock, int timeout_ms, std::string* error) {
  int fd = -1;
  if (wait_readable(sock, timeout_ms, "recvmsg", error)) {
    FdMessage msg;
    msghdr& m = msg.m;
    const ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    const cmsghdr* c = n == 1 ? CMSG_FIRSTHDR(&m) : nullptr;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    else
      *error = n < 0 ? sys_error("recvmsg") : std::string("recvmsg: no descriptor in the message");
  }
  close(sock);
  return fd;
}

}  // namespace vgen
