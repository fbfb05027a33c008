# FAULTLINE_STATIC=ON (make dist, scripts/dist): a binary that needs nothing
# but glibc, and no glibc symbol newer than FAULTLINE_GLIBC_FLOOR.
#
# Objects are compiled exactly as in the shared build (so ccache shares them);
# only the link differs:
# - the imported targets of the shared build (PkgConfig::HS, PkgConfig::RE2,
#   PkgConfig::ZSTD, ZLIB::ZLIB, yaml-cpp, fmt::fmt) link their static
#   archives instead (fmt's from FAULTLINE_FMT_ARCHIVE: Debian ships none);
# - libmicrohttpd from FAULTLINE_MHD_ARCHIVE, built without TLS from
#   Debian's source package (Debian's archive needs GnuTLS and p11-kit);
# - cpp-httplib is the single-file header from FAULTLINE_HTTPLIB_INCLUDE
#   (Debian's is split, its code in a shared library built with OpenSSL);
# - libstdc++ and libgcc are linked in (-static-libstdc++ -static-libgcc);
# - glibc is an older release's (FAULTLINE_SYSROOT, a debootstrap root): its
#   start files, libc.so and libc_nonshared.a, so a symbol that release lacks
#   fails the link instead of the run. glibc_compat.cc defines the three that
#   the static GCC runtime asks for.
# Included after the find_package calls of the top-level CMakeLists.

set(FAULTLINE_SYSROOT "" CACHE PATH "root of the release whose glibc the static build links against")
set(FAULTLINE_FMT_ARCHIVE "" CACHE FILEPATH "libfmt.a (fmt has no static archive in Debian)")
set(FAULTLINE_HTTPLIB_INCLUDE "" CACHE PATH "directory of the single-file httplib.h")
set(FAULTLINE_MHD_ARCHIVE "" CACHE FILEPATH "libmicrohttpd.a without TLS (Debian's needs GnuTLS, p11-kit)")
foreach(var FAULTLINE_SYSROOT FAULTLINE_FMT_ARCHIVE FAULTLINE_HTTPLIB_INCLUDE FAULTLINE_MHD_ARCHIVE)
  if(NOT ${var})
    message(FATAL_ERROR "FAULTLINE_STATIC needs -D${var}=... (scripts/dist sets them)")
  endif()
endforeach()

function(faultline_static_archive var name)
  find_library(${var} NAMES lib${name}.a REQUIRED NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH)
  message(STATUS "static ${name}: ${${var}}")
endfunction()
faultline_static_archive(FAULTLINE_HS_A hs)
faultline_static_archive(FAULTLINE_RE2_A re2)
faultline_static_archive(FAULTLINE_ZSTD_A zstd)
faultline_static_archive(FAULTLINE_Z_A z)
faultline_static_archive(FAULTLINE_YAML_A yaml-cpp)

set_property(TARGET PkgConfig::HS PROPERTY INTERFACE_LINK_LIBRARIES ${FAULTLINE_HS_A} m)
set_property(TARGET PkgConfig::RE2 PROPERTY INTERFACE_LINK_LIBRARIES ${FAULTLINE_RE2_A} Threads::Threads)
set_property(TARGET PkgConfig::ZSTD PROPERTY INTERFACE_LINK_LIBRARIES ${FAULTLINE_ZSTD_A})
# The dashboard's HTTP server: plain HTTP, so a build of it without TLS.
set_property(TARGET PkgConfig::MHD PROPERTY INTERFACE_LINK_LIBRARIES ${FAULTLINE_MHD_ARCHIVE} Threads::Threads)
# Imported shared libraries (config packages, FindZLIB): point every
# configuration's location at the archive.
foreach(pair "ZLIB::ZLIB=${FAULTLINE_Z_A}" "yaml-cpp=${FAULTLINE_YAML_A}" "fmt::fmt=${FAULTLINE_FMT_ARCHIVE}")
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 target)
  list(GET pair 1 archive)
  foreach(config "" _NONE _RELEASE _DEBUG _RELWITHDEBINFO _MINSIZEREL)
    set_property(TARGET ${target} PROPERTY IMPORTED_LOCATION${config} ${archive})
    set_property(TARGET ${target} PROPERTY IMPORTED_SONAME${config})
  endforeach()
endforeach()
# They are archives: nothing to find at run time.
set(CMAKE_SKIP_RPATH TRUE)
# cpp-httplib without TLS or compression: the dashboard serves plain HTTP.
set_target_properties(PkgConfig::HTTPLIB PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${FAULTLINE_HTTPLIB_INCLUDE}
                      INTERFACE_COMPILE_OPTIONS "" INTERFACE_LINK_LIBRARIES Threads::Threads)
file(STRINGS ${FAULTLINE_HTTPLIB_INCLUDE}/httplib.h httplib_impl REGEX "^inline ssize_t Stream::write\\(const char \\*ptr\\)")
if(NOT httplib_impl)
  message(FATAL_ERROR "${FAULTLINE_HTTPLIB_INCLUDE}/httplib.h is a split header without the implementation")
endif()

set(multiarch ${CMAKE_LIBRARY_ARCHITECTURE})
if(NOT multiarch)
  set(multiarch ${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu)
endif()
# -B: start files; -L ahead of the compiler's own path to the host's libc.
add_link_options(--sysroot=${FAULTLINE_SYSROOT} -B${FAULTLINE_SYSROOT}/usr/lib/${multiarch}
                 -L${FAULTLINE_SYSROOT}/usr/lib/${multiarch} -static-libstdc++ -static-libgcc)

# Every executable (faultline, and the helpers the build runs) gets the glibc
# symbols the static GCC runtime wants (glibc_compat.cc). Called at the end
# of the top-level CMakeLists, when all targets exist.
add_library(faultline_glibc_compat OBJECT ${CMAKE_CURRENT_LIST_DIR}/glibc_compat.cc)
function(faultline_link_glibc_compat dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_link_libraries(${t} PRIVATE faultline_glibc_compat)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d ${subdirs})
    faultline_link_glibc_compat(${d})
  endforeach()
endfunction()
