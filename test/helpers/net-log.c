/*
 * Preloaded into semsearch's processes by test/e2e/footprint.test.ts (LD_PRELOAD): appends a line to
 * the file named by SEMSEARCH_NET_LOG for every name looked up and every socket address connected to,
 * bound or sent to, then calls the C library's own function. Children inherit it with the environment.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void record(const char *what, const char *detail) {
  const char *file = getenv("SEMSEARCH_NET_LOG");
  if (file == NULL) return;
  int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char line[1200];
  int n = snprintf(line, sizeof line, "%d %s %s\n", (int)getpid(), what, detail);
  if (n > 0) {
    ssize_t ignored = write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    (void)ignored;
  }
  close(fd);
}

static void describe(const struct sockaddr *addr, socklen_t len, char *out, size_t size) {
  if (addr == NULL) {
    snprintf(out, size, "none");
  } else if (addr->sa_family == AF_UNIX) {
    const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
    size_t room = len > offsetof(struct sockaddr_un, sun_path) ? len - offsetof(struct sockaddr_un, sun_path) : 0;
    if (room > 0 && un->sun_path[0] == '\0') snprintf(out, size, "unix @%.*s", (int)(room - 1), un->sun_path + 1);
    else snprintf(out, size, "unix %.*s", (int)strnlen(un->sun_path, room), un->sun_path);
  } else if (addr->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    snprintf(out, size, "inet %s:%d", ip, ntohs(in->sin_port));
  } else if (addr->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
    snprintf(out, size, "inet6 [%s]:%d", ip, ntohs(in6->sin6_port));
  } else {
    snprintf(out, size, "family %d", addr->sa_family);
  }
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  char detail[1100];
  describe(addr, len, detail, sizeof detail);
  record("connect", detail);
  return REAL(connect)(fd, addr, len);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
  char detail[1100];
  describe(addr, len, detail, sizeof detail);
  record("bind", detail);
  return REAL(bind)(fd, addr, len);
}

ssize_t sendto(int fd, const void *buffer, size_t length, int flags, const struct sockaddr *addr, socklen_t len) {
  if (addr != NULL) {
    char detail[1100];
    describe(addr, len, detail, sizeof detail);
    record("sendto", detail);
  }
  return REAL(sendto)(fd, buffer, length, flags, addr, len);
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res) {
  char detail[1100];
  snprintf(detail, sizeof detail, "%s %s", node ? node : "-", service ? service : "-");
  record("resolve", detail);
  return REAL(getaddrinfo)(node, service, hints, res);
}
