# A Debian package of the installed tree: library, headers, CMake and
# pkg-config files, the CLI, kcache-jit, kcache-verify and (with
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
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "ocl-icd-libopencl1, libsqlite3-0, libzstd1, libxxhash0, libssl3, libstdc++6")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd, intel-opencl-icd, minisign")
if(KCACHE_PYTHON)
  # The extension is built for one Python minor version (its ABI tag).
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
      "python3 (>= ${KCACHE_PYTHON_VERSION}), python3 (<< ${KCACHE_PYTHON_NEXT_VERSION})")
  string(APPEND CPACK_DEBIAN_PACKAGE_SUGGESTS ", python3-pyopencl, python3-numpy")
endif()
# The machine-readable copyright file Debian expects at
# /usr/share/doc/kcache/copyright (the docdir of a /usr prefix).
install(FILES ${PROJECT_SOURCE_DIR}/cmake/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
set(CPACK_STRIP_FILES ON)
include(CPack)
