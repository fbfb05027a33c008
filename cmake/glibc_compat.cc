// Linked into the static build only (cmake/StaticDeps.cmake). The GCC
// runtime linked in statically (libstdc++.a, libgcc_eh.a) was built against
// the build host's glibc and refers to three symbols that the glibc floor of
// dist/faultline (2.31) does not have. Defined here, the linker binds them to
// these instead of asking glibc for them at load time. Compiles against old
// and new glibc headers alike (the new ones declare all three).
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstddef>

extern "C" {

// glibc 2.32: nonzero while the process has one thread, letting libstdc++
// skip atomic operations. 0 means "maybe several threads": always correct.
char __libc_single_threaded = 0;

// glibc 2.36 (libstdc++'s std::random_device): the kernel's random bytes.
uint32_t arc4random(void) noexcept {
  uint32_t v = 0;
  size_t got = 0;
  auto* p = reinterpret_cast<unsigned char*>(&v);
  while (got < sizeof(v)) {
    ssize_t n = getrandom(p + got, sizeof(v) - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno == ENOSYS) {  // a kernel older than 3.17
      int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;
      while (got < sizeof(v) && (n = read(fd, p + got, sizeof(v) - got)) > 0) got += static_cast<size_t>(n);
      close(fd);
      break;
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  return v;
}

}  // extern "C"

// glibc 2.35 (libgcc's unwinder, to find the unwind tables of the object a
// return address is in; without an answer an exception terminates). The
// layout is glibc's struct dl_find_object on targets without dlfo_eh_dbase.
#ifdef DLFO_STRUCT_HAS_EH_DBASE
using faultline_dl_find_object = struct dl_find_object;
#else
struct faultline_dl_find_object {
  unsigned long long int dlfo_flags;
  void* dlfo_map_start;
  void* dlfo_map_end;
  struct link_map* dlfo_link_map;
  void* dlfo_eh_frame;
  unsigned long long int reserved[7];
};
#endif

namespace {
struct FindState {
  uintptr_t pc;
  faultline_dl_find_object* out;
  bool found;
};

int FindObject(struct dl_phdr_info* info, size_t, void* data) {
  auto* state = static_cast<FindState*>(data);
  bool contains = false;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  void* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      if (start < lo) lo = start;
      if (start + ph.p_memsz > hi) hi = start + ph.p_memsz;
      if (state->pc >= start && state->pc < start + ph.p_memsz) contains = true;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<void*>(start);
    }
  }
  if (!contains) return 0;
  state->out->dlfo_flags = 0;
  state->out->dlfo_map_start = reinterpret_cast<void*>(lo);
  state->out->dlfo_map_end = reinterpret_cast<void*>(hi);
  state->out->dlfo_link_map = nullptr;
  state->out->dlfo_eh_frame = eh_frame;
  state->found = true;
  return 1;
}
}  // namespace

extern "C" int _dl_find_object(void* pc, faultline_dl_find_object* result) noexcept {
  FindState state{reinterpret_cast<uintptr_t>(pc), result, false};
  dl_iterate_phdr(FindObject, &state);
  return state.found ? 0 : -1;
}
