// ringlet_net.c — sockets (Sources/Ringlet/Net): making them, their addresses, the
// message headers their sends and receives go through, the ring's socket requests,
// and the same calls made at once without blocking for the epoll backend.
#include "ringlet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// The header's numbers are Linux's: checked here, where the real headers are.
_Static_assert(RL_AF_UNIX == AF_UNIX && RL_AF_INET == AF_INET && RL_AF_INET6 == AF_INET6, "families");
_Static_assert(RL_SOCK_STREAM == SOCK_STREAM && RL_SOCK_DGRAM == SOCK_DGRAM && RL_SOCK_SEQPACKET == SOCK_SEQPACKET,
               "socket types");
_Static_assert(RL_SHUT_RD == SHUT_RD && RL_SHUT_WR == SHUT_WR && RL_SHUT_RDWR == SHUT_RDWR, "shutdown");
_Static_assert(RL_SOL_SOCKET == SOL_SOCKET && RL_SCM_RIGHTS == SCM_RIGHTS && RL_SCM_CREDENTIALS == SCM_CREDENTIALS,
               "control messages");
_Static_assert(RL_SO_REUSEADDR == SO_REUSEADDR && RL_SO_PASSCRED == SO_PASSCRED && RL_SO_SNDBUF == SO_SNDBUF
               && RL_SO_RCVBUF == SO_RCVBUF && RL_SO_KEEPALIVE == SO_KEEPALIVE, "socket options");
_Static_assert(RL_IPPROTO_TCP == IPPROTO_TCP && RL_TCP_NODELAY == TCP_NODELAY, "tcp options");
_Static_assert(RL_MSG_TRUNC == MSG_TRUNC && RL_MSG_CTRUNC == MSG_CTRUNC, "message flags");
_Static_assert(RL_ADDRESS_BYTES >= sizeof(struct sockaddr_storage), "address storage");
_Static_assert(RL_CREDENTIALS_BYTES == sizeof(struct ucred), "credentials");

// MARK: Sockets and addresses

int rl_socket_open(int family, int type) {
    int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    return fd < 0 ? -errno : fd;
}

int rl_socket_pair(int type, int *first, int *second) {
    int fds[2];
    if (socketpair(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0) return -errno;
    *first = fds[0];
    *second = fds[1];
    return 0;
}

int rl_socket_make_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -errno;
    if (flags & O_NONBLOCK) return 0;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ? -errno : 0;
}

int rl_socket_bind(int fd, const void *address, unsigned int length) {
    return bind(fd, (const struct sockaddr *)address, length) < 0 ? -errno : 0;
}

int rl_socket_listen(int fd, int backlog) { return listen(fd, backlog) < 0 ? -errno : 0; }

int rl_socket_set_int_option(int fd, int level, int name, int value) {
    return setsockopt(fd, level, name, &value, sizeof value) < 0 ? -errno : 0;
}

int rl_socket_get_int_option(int fd, int level, int name, int *value) {
    socklen_t length = sizeof *value;
    return getsockopt(fd, level, name, value, &length) < 0 ? -errno : 0;
}

int rl_socket_local_address(int fd, void *address, unsigned int *length) {
    socklen_t size = RL_ADDRESS_BYTES;
    if (getsockname(fd, (struct sockaddr *)address, &size) < 0) return -errno;
    *length = size;
    return 0;
}

int rl_socket_peer_address(int fd, void *address, unsigned int *length) {
    socklen_t size = RL_ADDRESS_BYTES;
    if (getpeername(fd, (struct sockaddr *)address, &size) < 0) return -errno;
    *length = size;
    return 0;
}

int rl_socket_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) < 0) return -errno;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

void rl_socket_own_credentials(void *credentials) {
    struct ucred own = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
    memcpy(credentials, &own, sizeof own);
}

int rl_address_inet(const char *host, int port, void *address, unsigned int *length) {
    if (port < 0 || port > 65535) return -EINVAL;
    memset(address, 0, RL_ADDRESS_BYTES);
    struct sockaddr_in *v4 = address;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((unsigned short)port);
        *length = sizeof *v4;
        return 0;
    }
    struct sockaddr_in6 *v6 = address;
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((unsigned short)port);
        *length = sizeof *v6;
        return 0;
    }
    return -EINVAL;
}

int rl_address_unix(const char *path, unsigned int path_length, int abstract, void *address, unsigned int *length) {
    struct sockaddr_un *unix_address = address;
    // A filesystem path needs its NUL inside sun_path; an abstract name starts with one.
    size_t room = sizeof unix_address->sun_path - 1;
    if (path_length == 0 || path_length > room) return -ENAMETOOLONG;
    memset(address, 0, RL_ADDRESS_BYTES);
    unix_address->sun_family = AF_UNIX;
    if (abstract) {
        memcpy(unix_address->sun_path + 1, path, path_length);
        *length = (unsigned int)(offsetof(struct sockaddr_un, sun_path) + 1 + path_length);
    } else {
        if (memchr(path, 0, path_length)) return -EINVAL;
        memcpy(unix_address->sun_path, path, path_length);
        *length = (unsigned int)(offsetof(struct sockaddr_un, sun_path) + path_length + 1);
    }
    return 0;
}

int rl_address_family(const void *address, unsigned int length) {
    if (length < sizeof(sa_family_t)) return -EINVAL;
    return ((const struct sockaddr *)address)->sa_family;
}

int rl_address_port(const void *address, unsigned int length) {
    const struct sockaddr *any = address;
    if (any->sa_family == AF_INET && length >= sizeof(struct sockaddr_in))
        return ntohs(((const struct sockaddr_in *)address)->sin_port);
    if (any->sa_family == AF_INET6 && length >= sizeof(struct sockaddr_in6))
        return ntohs(((const struct sockaddr_in6 *)address)->sin6_port);
    return -EINVAL;
}

int rl_address_host(const void *address, unsigned int length, char *out, unsigned int capacity) {
    const struct sockaddr *any = address;
    const void *host = NULL;
    if (any->sa_family == AF_INET && length >= sizeof(struct sockaddr_in))
        host = &((const struct sockaddr_in *)address)->sin_addr;
    else if (any->sa_family == AF_INET6 && length >= sizeof(struct sockaddr_in6))
        host = &((const struct sockaddr_in6 *)address)->sin6_addr;
    else
        return -EINVAL;
    return inet_ntop(any->sa_family, host, out, capacity) ? 0 : -errno;
}

int rl_address_unix_path(const void *address, unsigned int length, char *out, unsigned int capacity,
                         int *abstract) {
    const struct sockaddr_un *unix_address = address;
    size_t start = offsetof(struct sockaddr_un, sun_path);
    if (unix_address->sun_family != AF_UNIX || length < start) return -EINVAL;
    size_t bytes = length - start;  // 0: an unnamed socket (a socketpair's, an unbound client)
    *abstract = bytes > 0 && unix_address->sun_path[0] == 0;
    const char *name = unix_address->sun_path + (*abstract ? 1 : 0);
    if (*abstract) bytes -= 1;
    else if (bytes > 0) bytes = strnlen(name, bytes);
    if (bytes + 1 > capacity) return -ENAMETOOLONG;
    memcpy(out, name, bytes);
    out[bytes] = 0;
    return (int)bytes;
}

// MARK: Message headers

struct rl_message {
    struct msghdr header;
    struct sockaddr_storage name;
    unsigned int iov_capacity;
    unsigned int control_capacity;
    struct iovec *iov;       // what is left to move (advanced by rl_message_consume)
    struct iovec *all;       // as added
    unsigned int iov_count;
    unsigned int first;      // the first iovec left in `all`
    unsigned int control_used;
    unsigned char *control;
};

rl_message *rl_message_create(unsigned int iov_capacity, unsigned int control_capacity) {
    if (iov_capacity == 0) iov_capacity = 1;
    rl_message *message = calloc(1, sizeof *message);
    if (!message) return NULL;
    message->iov_capacity = iov_capacity;
    message->control_capacity = control_capacity;
    message->iov = calloc(iov_capacity, sizeof(struct iovec));
    message->all = calloc(iov_capacity, sizeof(struct iovec));
    // cmsghdr wants its buffer aligned like size_t; calloc aligns to max_align_t.
    message->control = control_capacity ? calloc(1, control_capacity) : NULL;
    if (!message->iov || !message->all || (control_capacity && !message->control)) {
        rl_message_destroy(message);
        return NULL;
    }
    return message;
}

void rl_message_destroy(rl_message *message) {
    if (!message) return;
    free(message->iov);
    free(message->all);
    free(message->control);
    free(message);
}

int rl_message_add_buffer(rl_message *message, void *base, unsigned long long length) {
    if (message->iov_count == message->iov_capacity) return -ENOSPC;
    message->all[message->iov_count].iov_base = base;
    message->all[message->iov_count].iov_len = (size_t)length;
    message->iov_count += 1;
    return 0;
}

int rl_message_add_control(rl_message *message, int level, int type, const void *data, unsigned int length) {
    size_t space = CMSG_SPACE(length);
    if (message->control_used + space > message->control_capacity) return -ENOSPC;
    struct cmsghdr *header = (struct cmsghdr *)(message->control + message->control_used);
    memset(header, 0, space);
    header->cmsg_level = level;
    header->cmsg_type = type;
    header->cmsg_len = CMSG_LEN(length);
    memcpy(CMSG_DATA(header), data, length);
    message->control_used += (unsigned int)space;
    return 0;
}

// The header as a request takes it: the iovecs from `first`, the control data.
static void rl_message_prepare(rl_message *message, int receiving) {
    unsigned int left = message->iov_count - message->first;
    memcpy(message->iov, message->all + message->first, left * sizeof(struct iovec));
    memset(&message->header, 0, sizeof message->header);
    message->header.msg_iov = message->iov;
    message->header.msg_iovlen = left;
    if (receiving) {
        message->header.msg_name = &message->name;
        message->header.msg_namelen = sizeof message->name;
        message->header.msg_control = message->control_capacity ? message->control : NULL;
        message->header.msg_controllen = message->control_capacity;
    } else if (message->control_used) {
        message->header.msg_control = message->control;
        message->header.msg_controllen = message->control_used;
    }
}

void rl_message_consume(rl_message *message, unsigned long long bytes) {
    while (bytes > 0 && message->first < message->iov_count) {
        struct iovec *next = &message->all[message->first];
        if (bytes < next->iov_len) {
            next->iov_base = (char *)next->iov_base + bytes;
            next->iov_len -= (size_t)bytes;
            return;
        }
        bytes -= next->iov_len;
        message->first += 1;
    }
}

unsigned long long rl_message_remaining(const rl_message *message) {
    unsigned long long total = 0;
    for (unsigned int i = message->first; i < message->iov_count; i++) total += message->all[i].iov_len;
    return total;
}

void rl_message_drop_control(rl_message *message) { message->control_used = 0; }

int rl_message_flags(const rl_message *message) { return message->header.msg_flags; }

unsigned int rl_message_address(const rl_message *message, void *address) {
    unsigned int length = message->header.msg_namelen;
    if (length > sizeof message->name) length = sizeof message->name;
    memcpy(address, &message->name, length);
    return length;
}

int rl_message_next_control(const rl_message *message, unsigned int *cursor, int *level, int *type,
                            const void **data, unsigned int *length) {
    size_t used = message->header.msg_controllen;
    if (*cursor + sizeof(struct cmsghdr) > used) return 0;
    const struct cmsghdr *header = (const struct cmsghdr *)(message->control + *cursor);
    if (header->cmsg_len < CMSG_LEN(0) || *cursor + header->cmsg_len > used) return 0;
    *level = header->cmsg_level;
    *type = header->cmsg_type;
    *data = CMSG_DATA(header);
    *length = (unsigned int)(header->cmsg_len - CMSG_LEN(0));
    *cursor += (unsigned int)CMSG_ALIGN(header->cmsg_len);
    return 1;
}

unsigned int rl_control_space(unsigned int length) { return (unsigned int)CMSG_SPACE(length); }

// MARK: Socket requests on the ring (the ring's owner only)

struct io_uring *rl_ring_uring(rl_ring *ring);

static struct io_uring_sqe *rl_net_sqe(rl_ring *ring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(rl_ring_uring(ring));
    if (!sqe) {
        io_uring_submit(rl_ring_uring(ring));
        sqe = io_uring_get_sqe(rl_ring_uring(ring));
    }
    return sqe;
}

int rl_ring_prep_accept(rl_ring *ring, int fd, int multishot, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_net_sqe(ring);
    if (!sqe) return -EBUSY;
    if (multishot) io_uring_prep_multishot_accept(sqe, fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    else io_uring_prep_accept(sqe, fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_connect(rl_ring *ring, int fd, const void *address, unsigned int length,
                         unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_net_sqe(ring);
    if (!sqe) return -EBUSY;
    io_uring_prep_connect(sqe, fd, (const struct sockaddr *)address, length);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_recvmsg(rl_ring *ring, int fd, rl_message *message, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_net_sqe(ring);
    if (!sqe) return -EBUSY;
    rl_message_prepare(message, 1);
    io_uring_prep_recvmsg(sqe, fd, &message->header, MSG_CMSG_CLOEXEC);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

int rl_ring_prep_sendmsg(rl_ring *ring, int fd, rl_message *message, unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_net_sqe(ring);
    if (!sqe) return -EBUSY;
    rl_message_prepare(message, 0);
    io_uring_prep_sendmsg(sqe, fd, &message->header, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}


// MARK: Provided buffers (receives into buffers the kernel picks)

void rl_message_reset(rl_message *message) {
    message->iov_count = 0;
    message->first = 0;
    message->control_used = 0;
}

struct rl_buffer_ring {
    struct io_uring_buf_ring *entries;
    size_t bytes;
    int mask;
};

rl_buffer_ring *rl_buffer_ring_register(rl_ring *ring, unsigned short group, unsigned int count, int *error) {
    if (count == 0 || count > 32768 || (count & (count - 1))) { *error = -EINVAL; return NULL; }
    rl_buffer_ring *buffers = calloc(1, sizeof *buffers);
    if (!buffers) { *error = -ENOMEM; return NULL; }
    buffers->bytes = count * sizeof(struct io_uring_buf);
    // The kernel wants the ring page-aligned.
    void *memory = mmap(NULL, buffers->bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (memory == MAP_FAILED) { *error = -errno; free(buffers); return NULL; }
    buffers->entries = memory;
    buffers->mask = io_uring_buf_ring_mask(count);
    io_uring_buf_ring_init(buffers->entries);
    struct io_uring_buf_reg registration;
    memset(&registration, 0, sizeof registration);
    registration.ring_addr = (unsigned long)(uintptr_t)memory;
    registration.ring_entries = count;
    registration.bgid = group;
    int r = io_uring_register_buf_ring(rl_ring_uring(ring), &registration, 0);
    if (r < 0) {
        munmap(memory, buffers->bytes);
        free(buffers);
        *error = r;
        return NULL;
    }
    *error = 0;
    return buffers;
}

void rl_buffer_ring_give(rl_buffer_ring *buffers, void *address, unsigned int length, unsigned short id) {
    io_uring_buf_ring_add(buffers->entries, address, length, id, buffers->mask, 0);
    io_uring_buf_ring_advance(buffers->entries, 1);
}

int rl_ring_prep_recv_provided(rl_ring *ring, int fd, unsigned short group, int multishot,
                               unsigned long long user_data) {
    struct io_uring_sqe *sqe = rl_net_sqe(ring);
    if (!sqe) return -EBUSY;
    if (multishot) io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
    else io_uring_prep_recv(sqe, fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = group;
    io_uring_sqe_set_data64(sqe, user_data);
    return 0;
}

// MARK: The same calls, made at once without blocking (the epoll backend)

int rl_socket_accept_now(int fd) {
    int r = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    return r < 0 ? -errno : r;
}

int rl_socket_connect_now(int fd, const void *address, unsigned int length) {
    return connect(fd, (const struct sockaddr *)address, length) < 0 ? -errno : 0;
}

int rl_socket_connect_result(int fd) {
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) < 0) return -errno;
    return -error;
}

long long rl_socket_recvmsg_now(int fd, rl_message *message) {
    rl_message_prepare(message, 1);
    ssize_t r = recvmsg(fd, &message->header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    return r < 0 ? -errno : r;
}

long long rl_socket_sendmsg_now(int fd, rl_message *message) {
    rl_message_prepare(message, 0);
    ssize_t r = sendmsg(fd, &message->header, MSG_DONTWAIT | MSG_NOSIGNAL);
    return r < 0 ? -errno : r;
}

int rl_socket_shutdown(int fd, int how) { return shutdown(fd, how) < 0 ? -errno : 0; }
