# A Debian package of the installed tree: library, headers, CMake and
# pkg-config files, the CLI, kcache-jit, kcache-verify, the OpenCL layer
# (libkcache-layer.so, in the library directory) and (with
# KCACHE_AOT_PACK) the pack, with its signature PACK.minisig beside it when
# KCACHE_PACK_SIGNING_KEY is set (cmake/aot_pack.cmake installs both; minisign
# verifies it without kcache).
# With KCACHE_PYTHON it also holds the Python package for the system Python.
# `cpack -G DEB` in the build directory writes kcache_<version>_<arch>.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kcache)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "OpenCL kernel compilation cache with AOT packs and a watchdogged JIT")
# Who answers for the package and where the project lives: set them when
# configuring a package for distribution (-DKCACHE_PACKAGE_MAINTAINER=...,
# -DKCACHE_HOMEPAGE=...). The default address is a reserved .invalid one,
# so an unconfigured build never names a mailbox that is not ours.
set(KCACHE_PACKAGE_MAINTAINER "kcache authors <maintainers@kcache.invalid>" CACHE STRING
    "Maintainer field of the .deb: Name <address>")
set(KCACHE_HOMEPAGE "https://github.com/kcache/kcache" CACHE STRING
    "The project's home page (Homepage field of the .deb)")
set(CPACK_PACKAGE_CONTACT "${KCACHE_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${KCACHE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${KCACHE_HOMEPAGE}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${KCACHE_HOMEPAGE}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_PACKAGE_DESCRIPTION
    "kcache keeps OpenCL kernel binaries keyed by device, driver and source,\n\
prebuilds them for Intel iGPUs with ocloc, and compiles missing ones in a\n\
helper process under a watchdog.")
# The package installs where the build says it is installed: the paths the
# runtime compiles in (packs, kcache-jit) must match. A distribution package
# is built from a tree configured with -DCMAKE_INSTALL_PREFIX=/usr.
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends: dpkg-shlibdeps reads every ELF file the package ships (libkcache,
# the CLI, kcache-jit, kcache-verify, the Python extension) and names the
# package of each shared library they load, with the versions their symbols
# need: a library a later change links is a dependency without a hand-written
# list. libkcache itself is found in the package's own tree (-l). It needs
# dpkg-dev and file (scripts/setup.sh installs them).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ".${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
# libcurl is loaded at run time (dlopen at the HTTP client's first use:
# remote/src/http/curl_api.cpp), so dpkg-shlibdeps cannot see it: named
# here, at the version that has CURLOPT_AWS_SIGV4.
set(KCACHE_DEB_RUNTIME_DEPENDS "libcurl4 (>= 7.75.0)")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${KCACHE_DEB_RUNTIME_DEPENDS}")
# libkcache.so.N lands in the library directory: dpkg's ldconfig trigger makes
# the loader find it even when nothing else installed runs ldconfig.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/deb/triggers)
# An OpenCL driver: the ICD loader alone lists no device. apt installs
# Recommends by default, so a fresh machine gets PoCL's CPU device.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pocl-opencl-icd | opencl-icd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "intel-opencl-icd, minisign")
if(KCACHE_PYTHON)
  # The Python package is built for one Python minor version (the extension's
  # ABI tag), which loads it without linking libpython: the interpreter is a
  # dependency of its own. pyopencl and numpy serve kcache.ops and pyopencl
  # programs; `import kcache` works without them.
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS
         ", python3 (>= ${KCACHE_PYTHON_VERSION}), python3 (<< ${KCACHE_PYTHON_NEXT_VERSION})")
  string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS ", python3-pyopencl, python3-numpy")
endif()
# The machine-readable copyright file Debian expects at
# /usr/share/doc/kcache/copyright (the docdir of a /usr prefix).
install(FILES ${PROJECT_SOURCE_DIR}/cmake/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
set(CPACK_STRIP_FILES ON)
include(CPack)
