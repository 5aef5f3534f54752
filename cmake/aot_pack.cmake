# Install-time AOT prebuild (docs/design.md, "Interfaces"): with KCACHE_AOT_PACK on
# (the default when ocloc is found) the build runs `kcache prebuild` for the
# device database's listed iGPUs and `cmake --install` (and the .deb) installs
# the pack under share/kcache/packs, where the runtime finds it unconfigured.
# -DKCACHE_PACK_SIGNING_KEY=FILE also signs it (PACK.minisig, installed beside it).
# With KCACHE_PACK_IL on (the default when clang-14 and llvm-spirv-14 are found)
# the pack also carries each variant's SPIR-V entry (`prebuild --il`, docs/design.md,
# "The SPIR-V tier"), which a device whose driver loads IL and that has no
# binary in the pack (Meteor Lake, Lunar Lake, Arrow Lake: ocloc 22.43 cannot
# target them) builds instead of the source. What it costs, measured on a
# shared 2-core VM: one clang and one llvm-spirv run per variant, 24 variants
# in 1 to 3 s (the ocloc builds of the same pack take about 100 s), and 116 KiB
# more of the pack (2.29 MB without, 2.41 MB with).
find_program(KCACHE_OCLOC ocloc)
find_program(KCACHE_CLANG14 clang-14)
find_program(KCACHE_LLVM_SPIRV14 llvm-spirv-14)
if(KCACHE_CLANG14 AND KCACHE_LLVM_SPIRV14)
  set(kcache_pack_il_default ON)
else()
  set(kcache_pack_il_default OFF)
endif()
if(KCACHE_OCLOC)
  set(kcache_aot_default ON)
else()
  set(kcache_aot_default OFF)
endif()
option(KCACHE_AOT_PACK "Prebuild and install the AOT pack for the listed iGPUs (needs ocloc)"
       ${kcache_aot_default})
# With a secret key (`kcache keygen` or `minisign -G -W`), the pack is signed:
# PACK.minisig is built and installed beside it (and so shipped in the .deb).
set(KCACHE_PACK_SIGNING_KEY "" CACHE FILEPATH
    "Unencrypted minisign secret key that signs the AOT pack (empty: unsigned)")
option(KCACHE_PACK_IL "The AOT pack also carries SPIR-V per variant (needs clang-14, llvm-spirv-14)"
       ${kcache_pack_il_default})

if(KCACHE_AOT_PACK)
  if(NOT KCACHE_OCLOC)
    message(FATAL_ERROR "KCACHE_AOT_PACK is ON but ocloc was not found: install intel-opencl-icd "
                        "or configure with -DKCACHE_AOT_PACK=OFF")
  endif()
  cmake_host_system_information(RESULT kcache_cores QUERY NUMBER_OF_LOGICAL_CORES)
  set(KCACHE_AOT_PACK_FILE ${PROJECT_BINARY_DIR}/packs/kcache-listed-igpus.kcpack)
  set(kcache_pack_outputs ${KCACHE_AOT_PACK_FILE})
  set(kcache_il_args "")
  if(KCACHE_PACK_IL)
    if(NOT KCACHE_CLANG14 OR NOT KCACHE_LLVM_SPIRV14)
      message(FATAL_ERROR "KCACHE_PACK_IL is ON but clang-14 or llvm-spirv-14 was not found: "
                          "install them or configure with -DKCACHE_PACK_IL=OFF")
    endif()
    set(kcache_il_args --il --clang ${KCACHE_CLANG14} --llvm-spirv ${KCACHE_LLVM_SPIRV14})
  endif()
  set(kcache_sign_args "")
  if(KCACHE_PACK_SIGNING_KEY)
    get_filename_component(kcache_signing_key "${KCACHE_PACK_SIGNING_KEY}" ABSOLUTE
                           BASE_DIR ${PROJECT_BINARY_DIR})
    if(NOT EXISTS "${kcache_signing_key}")
      message(FATAL_ERROR "KCACHE_PACK_SIGNING_KEY: no such file: ${kcache_signing_key}")
    endif()
    set(kcache_sign_args --sign ${kcache_signing_key})
    list(APPEND kcache_pack_outputs ${KCACHE_AOT_PACK_FILE}.minisig)
  endif()
  add_custom_command(OUTPUT ${kcache_pack_outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packs
    COMMAND ${CMAKE_COMMAND} -E rm -f ${KCACHE_AOT_PACK_FILE} ${KCACHE_AOT_PACK_FILE}.minisig
    COMMAND $<TARGET_FILE:kcache_cli> prebuild --output ${KCACHE_AOT_PACK_FILE}
            --jobs ${kcache_cores} --ocloc ${KCACHE_OCLOC} --quiet ${kcache_il_args}
            ${kcache_sign_args}
    DEPENDS kcache_cli ${kcache_signing_key}
    COMMENT "Prebuilding the AOT pack for the listed iGPUs with ocloc"
    VERBATIM)
  add_custom_target(kcache_aot_pack ALL DEPENDS ${kcache_pack_outputs})
  install(FILES ${kcache_pack_outputs} DESTINATION ${CMAKE_INSTALL_DATADIR}/kcache/packs)
endif()
