/* relay_store.c — a hang passed through the job's TCPStore (relay.h).
 *
 * PyTorch launchers (torchrun, init_process_group's env://) run a TCPStore
 * at MASTER_ADDR:MASTER_PORT that every rank reaches.  With
 * FR_TRIGGER_STORE=1 fr-relay-store holds one connection of its own to
 * it; a hang sets the key /flightrec/trigger[/JOB] to the trigger line
 * (unless another rank's line for the same hang is there: the first stays),
 * and every FR_TRIGGER_STORE_POLL_MS (default 1000) each rank asks whether
 * the key exists and reads it when it does: one small query per rank per
 * poll.
 *
 * The wire protocol is PyTorch's (torch/csrc/distributed/c10d/TCPStore.cpp,
 * TCPStoreBackend.hpp/.cpp and TCPStoreLibUvBackend.cpp): a query is a u8
 * type, then its arguments; integers in the host's byte order; a string or
 * byte vector is a u64 length and the bytes.  Two numberings are in use:
 *                          current   older (PyTorch 2.1 and before:
 *                                    1.13, Debian 12's python3-torch)
 *   VALIDATE + u32 magic      0      -    first on every connection; no answer
 *   SET                       1      0
 *   COMPARE_SET               2      1   key, expected, desired; the value is
 *                                        set to desired when it is expected (or
 *                                        missing and expected empty); answer:
 *                                        the value now
 *   GET                       3      2   key; answer: value (asked only after
 *                                        CHECK said ready: a missing key makes
 *                                        the server wait or drop us)
 *   CHECK                     5      4   u64 count, keys; answer: u8 0 ready
 *                                        (all exist), 1 not
 *   GETNUMKEYS                7      6   answer: i64 number of keys
 * A current server (the legacy daemon and the libuv one) drops a connection
 * whose first query is not VALIDATE 0x3C85F7CE; an older one takes byte 0
 * as SET and reads a u64 key length next.  So the greeting is VALIDATE, the
 * magic, then four GETNUMKEYS (7 7 7 7): a current server answers four
 * counts; an older one reads the key length 0x070707073C85F7CE (about 2^58
 * bytes, more than any address space), fails to allocate it, and closes
 * that connection quietly, serving the others on (checked against PyTorch
 * 1.13's server).  Then one GETNUMKEYS in the older numbering, on a new
 * connection, tells an older server.  The numbering found is kept for
 * reconnections; the polls themselves carry no probing.  A server that
 * answers neither greeting (it closes, or answers what no TCPStore would)
 * is one line on stderr and the store is not used again; one that does not
 * answer at all is retried, and after 3 greetings without an answer it is
 * given up the same way.
 * PyTorch's client API puts "/" in front of every key, so Python sees ours
 * as store.get("flightrec/trigger/JOB").  Each query (and the connection)
 * has 2 seconds in all, however the server dribbles its answer; a store
 * that refuses us or breaks is one line on stderr, then retried quietly at
 * growing intervals (up to 30 s).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "recorder.h"
#include "relay.h"

#define STORE_MAGIC 0x3C85F7CEu
/* query types, current numbering; the older one is each minus 1 (qt()) */
#define Q_VALIDATE 0
#define Q_COMPARE_SET 2
#define Q_GET 3
#define Q_CHECK 5
#define Q_GETNUMKEYS 7
#define GREETING_TRIES 3 /* greetings without any answer before giving up */
#define IO_LIMIT_MS 2000
#define RETRY_MAX_NS (30ull * 1000000000ull)

static int fd = -1; /* written atomically: fr_store_interrupt reads it from another thread */
static char host[256], port[16], key[160];
static uint64_t next_try_ns, retry_ns = 1000000000ull;
static int complained;
static uint64_t io_deadline_ns; /* CLOCK_MONOTONIC: the current query's end */
static _Atomic int interrupted; /* the process is exiting: no more tries, no complaint */
static int closed_by_server;    /* the last receive met the end of the connection */

/* The server's protocol: unknown until a greeting is answered, then kept. */
enum { PROTO_UNKNOWN, PROTO_VALIDATE, PROTO_OLDER };
static int proto;
static int given_up;     /* a server we do not understand: never again */
static int silent_tries; /* greetings in a row that got no answer at all */

/* A query type in the server's numbering. */
static uint8_t qt(uint8_t current) { return proto == PROTO_OLDER ? (uint8_t)(current - 1) : current; }

/* A TCP port number: decimal digits, 1..65535. */
static int port_ok(const char *p) {
  long v = 0;
  if (!*p) return 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return 0;
    v = v * 10 + (*p - '0');
    if (v > 65535) return 0;
  }
  return v > 0;
}

/* host and port from FR_TRIGGER_STORE_ADDR (HOST:PORT, [V6]:PORT), else
 * MASTER_ADDR and MASTER_PORT. */
static int addr_bad; /* FR_TRIGGER_STORE_ADDR was malformed: MASTER_ADDR/PORT */
static int find_address(void) {
  const char *a = addr_bad ? NULL : getenv("FR_TRIGGER_STORE_ADDR");
  if (a && *a) {
    const char *colon = strrchr(a, ':');
    if (!colon || colon == a || !colon[1] || strlen(colon + 1) >= sizeof port) return -1;
    size_t hl = (size_t)(colon - a);
    if (a[0] == '[' && hl >= 2 && a[hl - 1] == ']') a++, hl -= 2;
    if (hl >= sizeof host) return -1;
    memcpy(host, a, hl);
    host[hl] = '\0';
    snprintf(port, sizeof port, "%s", colon + 1);
    return port_ok(port) && host[0] ? 0 : -1;
  }
  const char *h = getenv("MASTER_ADDR"), *p = getenv("MASTER_PORT");
  if (!h || !*h || !p || !*p || strlen(h) >= sizeof host || strlen(p) >= sizeof port) return -1;
  snprintf(host, sizeof host, "%s", h);
  snprintf(port, sizeof port, "%s", p);
  return port_ok(port) ? 0 : -1;
}

int fr_store_wanted(void) {
  if (!fr_g.cfg.trigger_store) return 0;
  const char *a = getenv("FR_TRIGGER_STORE_ADDR");
  if (a && *a && find_address() != 0) {
    fr_log("FR_TRIGGER_STORE_ADDR=\"%.60s\" is not HOST:PORT (a port from 1 to 65535); using MASTER_ADDR "
           "and MASTER_PORT", a);
    addr_bad = 1;
  }
  if (find_address() != 0) {
    if (fr_g.cfg.trigger_store == 2) return 0; /* torchrun's default: nothing to say */
    fr_log("FR_TRIGGER_STORE=1 but no store address (FR_TRIGGER_STORE_ADDR=HOST:PORT, or MASTER_ADDR "
           "and MASTER_PORT with a port from 1 to 65535); the store is not used");
    return 0;
  }
  if (fr_g.cfg.job_id[0]) snprintf(key, sizeof key, "/flightrec/trigger/%.100s", fr_g.cfg.job_id);
  else snprintf(key, sizeof key, "/flightrec/trigger");
  return 1;
}

/* A query (or a connection) begins: IO_LIMIT_MS for all of it. */
static void begin_io(void) { io_deadline_ns = fr_now_ns() + (uint64_t)IO_LIMIT_MS * 1000000ull; }

/* Wait until fd is ready for `events`, until the query's deadline: 0 or -1. */
static int wait_fd(short events) {
  struct pollfd p = {fd, events, 0};
  int n;
  do {
    uint64_t now = fr_now_ns();
    if (now >= io_deadline_ns) return -1;
    n = poll(&p, 1, (int)((io_deadline_ns - now + 999999) / 1000000));
  } while (n < 0 && errno == EINTR);
  if (n == 1 && (p.revents & POLLERR)) closed_by_server = 1; /* reset by the peer */
  return n == 1 && !(p.revents & (POLLERR | POLLNVAL)) ? 0 : -1;
}

static int send_all(const void *buf, size_t len) {
  const uint8_t *b = buf;
  closed_by_server = 0;
  while (len) {
    if (wait_fd(POLLOUT) != 0) return -1;
    ssize_t n = send(fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) closed_by_server = 1;
    if (n <= 0) return -1;
    b += n;
    len -= (size_t)n;
  }
  return 0;
}

static int recv_all(void *buf, size_t len) {
  uint8_t *b = buf;
  closed_by_server = 0;
  while (len) {
    if (wait_fd(POLLIN) != 0) return -1;
    ssize_t n = recv(fd, b, len, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 0 || (n < 0 && errno == ECONNRESET)) closed_by_server = 1;
    if (n <= 0) return -1;
    b += n;
    len -= (size_t)n;
  }
  return 0;
}

/* A query: its type, then for each of `n` parts a u64 length and bytes
 * (lens[i] == (size_t)-1: the part is a raw value, no length). */
static int send_query(uint8_t type, const void *const *parts, const size_t *lens, int n) {
  uint8_t buf[2 * FRZ_TRIGGER_LINE_MAX + 256];
  size_t at = 0;
  buf[at++] = type;
  for (int i = 0; i < n; i++) {
    int raw = lens[i] == (size_t)-1;
    size_t len = raw ? sizeof(uint64_t) : lens[i];
    if (at + 8 + len > sizeof buf) return -1;
    if (!raw) {
      uint64_t l = len;
      memcpy(buf + at, &l, 8);
      at += 8;
    }
    memcpy(buf + at, parts[i], len);
    at += len;
  }
  return send_all(buf, at);
}

static void drop(const char *why) {
  if (fd >= 0) close(fd);
  __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
  if (!complained && !atomic_load(&interrupted)) {
    fr_log("FR_TRIGGER_STORE: the TCPStore at %s:%s %s; retrying quietly (the trigger file goes on working)",
           host, port, why);
    complained = 1;
  }
}

/* One line and the store is not used again (the process's lifetime). */
static void give_up(const char *why) {
  if (fd >= 0) close(fd);
  __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
  given_up = 1;
  if (!atomic_load(&interrupted))
    fr_log("FR_TRIGGER_STORE: the server at %s:%s %s; the store is not used (the trigger file goes on working)",
           host, port, why);
}

/* A TCP connection to host:port into fd: 0, or -1 (dropped). */
static int open_socket(void) {
  begin_io();
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &res) != 0 || !res) {
    drop("cannot be resolved");
    return -1;
  }
  for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    __atomic_store_n(&fd, socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol),
                     __ATOMIC_RELEASE);
    if (fd < 0) continue;
    int ok = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!ok && errno == EINPROGRESS && wait_fd(POLLOUT) == 0) {
      int err = 0;
      socklen_t el = sizeof err;
      ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0;
    }
    if (!ok) {
      close(fd);
      __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
    }
  }
  freeaddrinfo(res);
  if (atomic_load(&interrupted) && fd >= 0) {
    close(fd);
    __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
  }
  if (fd < 0) {
    drop("refuses the connection");
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return 0;
}

/* The greeting of protocol p on the open fd (see the top of this file):
 * 0 answered as that protocol's server would, 1 not this protocol (the
 * server closed the connection or answered what no TCPStore would), -1 no
 * answer in time or a local failure. */
static int greet(int p) {
  uint8_t q[9];
  size_t len, nanswers;
  if (p == PROTO_VALIDATE) {
    uint32_t magic = STORE_MAGIC;
    q[0] = Q_VALIDATE;
    memcpy(q + 1, &magic, 4);
    memset(q + 5, Q_GETNUMKEYS, 4);
    len = 9, nanswers = 4;
  } else {
    q[0] = Q_GETNUMKEYS - 1;
    len = 1, nanswers = 1;
  }
  int64_t n[4];
  begin_io();
  if (send_all(q, len) != 0) return closed_by_server ? 1 : -1;
  if (recv_all(n, nanswers * sizeof n[0]) != 0) return closed_by_server ? 1 : -1;
  for (size_t i = 0; i < nanswers; i++)
    if (n[i] < 0 || n[i] > (INT64_C(1) << 40)) return 1; /* not a count of keys */
  return 0;
}

/* Connect and greet: the known protocol, else the current one, then the
 * older one on a new connection.  0 when fd is ready for queries. */
static int connect_store(void) {
  if (given_up || open_socket() != 0) return -1;
  int p = proto != PROTO_UNKNOWN ? proto : PROTO_VALIDATE;
  int r = greet(p);
  if (r == 1 && proto == PROTO_UNKNOWN) {
    close(fd);
    __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
    if (open_socket() != 0) return -1;
    p = PROTO_OLDER;
    r = greet(p);
  }
  if (r == 0) {
    proto = p;
    silent_tries = 0;
    retry_ns = 1000000000ull;
    return 0;
  }
  if (r == 1 && proto == PROTO_UNKNOWN)
    give_up("answers neither as a PyTorch TCPStore with VALIDATE (PyTorch 2.2 and later) nor as one without "
            "(earlier)");
  else if (r == 1)
    drop("closed the connection at our greeting");
  else if (proto == PROTO_UNKNOWN && ++silent_tries >= GREETING_TRIES)
    give_up("did not answer a TCPStore greeting 3 times");
  else if (proto == PROTO_UNKNOWN) { /* slow, or not a TCPStore: no word until that is clear */
    close(fd);
    __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
  } else
    drop("does not answer");
  return -1;
}

/* Connected, or tried too recently: 0 when fd is usable. */
static int ensure(uint64_t now_ns) {
  if (fd >= 0) return 0;
  if (given_up || atomic_load(&interrupted)) return -1;
  if (now_ns < next_try_ns) return -1;
  if (connect_store() == 0) return 0;
  next_try_ns = now_ns + retry_ns;
  retry_ns = retry_ns * 2 > RETRY_MAX_NS ? RETRY_MAX_NS : retry_ns * 2;
  return -1;
}

/* The key's value into value[FRZ_TRIGGER_LINE_MAX]: 1 and *len, 0 when
 * the key is not there, -1 when the store broke (dropped). */
static int read_key(char *value, size_t *len) {
  uint64_t one = 1;
  const void *cparts[] = {&one, key};
  size_t clens[] = {(size_t)-1, strlen(key)};
  uint8_t ready = 1;
  begin_io();
  if (send_query(qt(Q_CHECK), cparts, clens, 2) != 0 || recv_all(&ready, 1) != 0) {
    drop("stopped answering");
    return -1;
  }
  if (ready != 0) return 0; /* 1: not there (yet) */
  const void *gparts[] = {key};
  size_t glens[] = {strlen(key)};
  uint64_t n = 0;
  begin_io();
  if (send_query(qt(Q_GET), gparts, glens, 1) != 0 || recv_all(&n, 8) != 0 || n > FRZ_TRIGGER_LINE_MAX ||
      recv_all(value, (size_t)n) != 0) {
    drop("gave a broken answer");
    return -1;
  }
  *len = (size_t)n;
  return 1;
}

void fr_store_poll(uint64_t now_ns) {
  if (ensure(now_ns) != 0) return;
  char value[FRZ_TRIGGER_LINE_MAX];
  size_t len;
  if (read_key(value, &len) == 1) fr_relay_deliver(FRZ_TRIGGER_STORE, value, len);
}

/* Set the key to `line` unless it holds another rank's line of this same
 * hang already (from the last half timeout, at most 10 s): the first rank
 * stays the one the others are told of.  COMPARE_SET (2) against what was
 * read makes it first-wins between ranks that publish at once too. */
void fr_store_publish(const char *line) {
  if (fd < 0 && (atomic_load(&interrupted) || connect_store() != 0))
    return; /* a hang is worth a connection attempt now */
  char cur[FRZ_TRIGGER_LINE_MAX];
  size_t curlen = 0;
  int have = read_key(cur, &curlen);
  if (have < 0) return;
  frz_trigger_line mine, theirs;
  frz_trigger_line_parse(line, strlen(line), &mine);
  uint64_t window = (uint64_t)fr_g.cfg.timeout_sec * 500000000ull;
  if (window > 10000000000ull) window = 10000000000ull;
  if (have && frz_trigger_line_parse(cur, curlen, &theirs) == 0 && theirs.time_ns &&
      theirs.time_ns <= mine.time_ns + 10000000000ull && theirs.time_ns + window >= mine.time_ns)
    return;
  const void *parts[] = {key, cur, line};
  size_t lens[] = {strlen(key), have ? curlen : 0, strlen(line)};
  uint64_t n = 0;
  char answer[FRZ_TRIGGER_LINE_MAX];
  begin_io();
  if (send_query(qt(Q_COMPARE_SET), parts, lens, 3) != 0 || recv_all(&n, 8) != 0 || n > sizeof answer ||
      recv_all(answer, (size_t)n) != 0)
    drop("refused our key");
}

void fr_store_interrupt(void) {
  atomic_store(&interrupted, 1);
  int f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
  if (f >= 0) shutdown(f, SHUT_RDWR); /* a send or receive in progress returns at once */
}

void fr_store_close(void) {
  if (fd >= 0) close(fd);
  __atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
}
